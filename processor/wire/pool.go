package wire

import (
	"math/bits"
	"sync"

	"google.golang.org/grpc/mem"
)

// Pool is a mem.BufferPool that does not zero the buffers it hands out:
// gRPC's transport reads a whole frame into what it gets, its codecs
// overwrite what they get, and so does this package. Capacities come in
// classes a quarter of a power of two apart (4 KiB, 5 KiB, 6 KiB, 7 KiB,
// 8 KiB, 10 KiB, ...), so a buffer wastes at most a fifth of itself; sizes
// above maxPooled are allocated and left to the garbage collector. Like any
// sync.Pool, it keeps idle buffers only until the next garbage collections.
type Pool struct {
	classes [numClasses]sync.Pool
}

const (
	minClassShift  = 8  // the smallest class holds 256 bytes
	maxClassShift  = 26 // the largest holds 64 MiB
	stepsPerOctave = 4
	numClasses     = (maxClassShift-minClassShift)*stepsPerOctave + 1
	maxPooled      = 1 << maxClassShift
)

// classCap returns the capacity of class c.
func classCap(c int) int {
	if c == 0 {
		return 1 << minClassShift
	}
	octave, step := (c-1)/stepsPerOctave, (c-1)%stepsPerOctave+1
	lo := 1 << (minClassShift + octave)
	return lo + step*(lo/stepsPerOctave)
}

// classFor returns the smallest class whose capacity is at least n, for
// 0 < n <= maxPooled.
func classFor(n int) int {
	if n <= 1<<minClassShift {
		return 0
	}
	// lo < n <= 2·lo, lo a power of two.
	e := bits.Len(uint(n-1)) - 1
	lo := 1 << e
	step := (n - lo + lo/stepsPerOctave - 1) / (lo / stepsPerOctave)
	return (e-minClassShift)*stepsPerOctave + step
}

// classBelow returns the largest class whose capacity is at most c, or -1
// when there is none or c is above the largest class.
func classBelow(c int) int {
	if c < 1<<minClassShift || c > maxPooled {
		return -1
	}
	// lo <= c < 2·lo: the classes lo (the last of the octave below) and
	// lo·(1+s/4), s = 1..3.
	e := bits.Len(uint(c)) - 1
	lo := 1 << e
	return (e-minClassShift)*stepsPerOctave + (c-lo)/(lo/stepsPerOctave)
}

// Get returns a buffer of length n whose bytes are whatever they were.
func (p *Pool) Get(n int) *[]byte {
	if n <= 0 || n > maxPooled {
		b := make([]byte, max(n, 0))
		return &b
	}
	c := classFor(n)
	if b, ok := p.classes[c].Get().(*[]byte); ok {
		*b = (*b)[:n]
		return b
	}
	b := make([]byte, n, classCap(c))
	return &b
}

// Put returns a buffer to the pool; the caller must not use it afterwards.
func (p *Pool) Put(b *[]byte) {
	if c := classBelow(cap(*b)); c >= 0 {
		p.classes[c].Put(b)
	}
}

// DefaultPool is the pool the codec and the processor's reply buffers use;
// ServerOptions installs it for gRPC's transport too.
var DefaultPool = &Pool{}

var _ mem.BufferPool = (*Pool)(nil)
