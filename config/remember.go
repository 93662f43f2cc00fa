package config

import (
	"fmt"
	"time"
)

// Defaults of Remember (the file's remember section).
const (
	// DefaultRememberTTL is Remember.TTL when none is given.
	DefaultRememberTTL = 10 * time.Minute
	// DefaultVerifyOneIn is remember.verify_one_in when the file does not
	// set it.
	DefaultVerifyOneIn = 100
	// MaxRememberEntries bounds Remember.Entries.
	MaxRememberEntries = 10_000_000
)

// Remember configures the processor's memory of bodies no rule matched:
// per compiled rule set, host and path, the rules that matched the last
// body of a response with a validator, so that the next response with the
// same validator, whose body matched nothing, is not streamed at all.
type Remember struct {
	// Entries bounds the responses remembered (least recently used
	// forgotten first); 0 turns the memory off.
	Entries int
	// TTL is how long a remembered body is trusted after it was last
	// streamed; New turns 0 into DefaultRememberTTL.
	TTL time.Duration
	// VerifyOneIn streams one in this many responses the memory would
	// skip, to check it; 0 never does.
	VerifyOneIn int
}

// check validates r, appending what is wrong to errs, and fills in its
// defaults.
func (r *Remember) check(errs []error) []error {
	if r.Entries < 0 || r.Entries > MaxRememberEntries {
		errs = append(errs, fmt.Errorf("remember: entries %d: want 0..%d", r.Entries, MaxRememberEntries))
	}
	if r.TTL < 0 {
		errs = append(errs, fmt.Errorf("remember: negative ttl %v", r.TTL))
	}
	if r.VerifyOneIn < 0 {
		errs = append(errs, fmt.Errorf("remember: negative verify_one_in %d", r.VerifyOneIn))
	}
	if r.TTL == 0 {
		r.TTL = DefaultRememberTTL
	}
	return errs
}
