package wire

import "testing"

func TestPoolClasses(t *testing.T) {
	tests := []struct{ n, wantCap int }{
		{1, 256}, {256, 256}, {257, 320}, {320, 320}, {321, 384}, {512, 512}, {513, 640},
		{16 << 10, 16 << 10}, {16<<10 + 1, 20 << 10}, {262144 + 4096, 320 << 10}, {maxPooled, maxPooled},
	}
	for _, tt := range tests {
		if got := classCap(classFor(tt.n)); got != tt.wantCap {
			t.Errorf("class of %d holds %d bytes, want %d", tt.n, got, tt.wantCap)
		}
	}
	// Every size gets the smallest class that holds it, within a fifth of
	// wasted room (a quarter of the size asked), and classBelow inverts
	// classCap.
	for c := range numClasses {
		if got := classBelow(classCap(c)); got != c {
			t.Errorf("classBelow(%d) = %d, want %d", classCap(c), got, c)
		}
		if c > 0 && classBelow(classCap(c)-1) != c-1 {
			t.Errorf("classBelow(%d) = %d, want %d", classCap(c)-1, classBelow(classCap(c)-1), c-1)
		}
	}
	for n := 1; n <= maxPooled; n += 1 + n/97 {
		c := classFor(n)
		if classCap(c) < n || (c > 0 && classCap(c-1) >= n) {
			t.Fatalf("size %d: class %d (%d bytes) is not the smallest that holds it", n, c, classCap(c))
		}
		if n > 256 && classCap(c)-n > n/4 {
			t.Fatalf("size %d: class of %d bytes wastes more than a quarter", n, classCap(c))
		}
	}
	for _, c := range []int{0, 1, 255, maxPooled + 1} {
		if got := classBelow(c); got != -1 {
			t.Errorf("classBelow(%d) = %d, want -1 (not pooled)", c, got)
		}
	}
}

func TestPoolReuse(t *testing.T) {
	var p Pool
	b := p.Get(5000)
	if len(*b) != 5000 || cap(*b) != 5120 {
		t.Fatalf("Get(5000): len %d cap %d, want 5000 and 5120", len(*b), cap(*b))
	}
	p.Put(b)
	// Whether or not sync.Pool kept it, the next buffer of the class has
	// the class's capacity.
	again := p.Get(4200)
	if len(*again) != 4200 || cap(*again) != 5120 {
		t.Fatalf("Get(4200): len %d cap %d, want 4200 and 5120", len(*again), cap(*again))
	}
	for _, n := range []int{0, maxPooled + 1} {
		if b := p.Get(n); len(*b) != n {
			t.Errorf("Get(%d): len %d", n, len(*b))
		}
	}
}
