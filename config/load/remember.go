package load

import (
	"time"

	"github.com/streamsub/streamsub/config"
	configv1 "github.com/streamsub/streamsub/proto/streamsub/config/v1"
)

// maxRememberTTL bounds remember.ttl.
const maxRememberTTL = 24 * time.Hour

// checkRemember validates the remember section and returns it as
// config.Remember; absent, the memory is off.
func checkRemember(errs *errorList, pb *configv1.Remember) config.Remember {
	if pb == nil {
		return config.Remember{}
	}
	r := config.Remember{Entries: int(pb.GetEntries()), VerifyOneIn: config.DefaultVerifyOneIn}
	if n := pb.GetEntries(); n < 0 || n > config.MaxRememberEntries {
		errs.add(errorf("remember.entries: want 0 (off) to %d, got %d", config.MaxRememberEntries, n))
	}
	if s := pb.GetTtl(); s != "" {
		d, err := time.ParseDuration(s)
		switch {
		case err != nil:
			errs.add(errorf("remember.ttl: %q is not a duration such as \"10m\" or \"1h30m\"", s))
		case d < time.Second || d > maxRememberTTL:
			errs.add(errorf("remember.ttl: want 1s to %v, got %v", maxRememberTTL, d))
		default:
			r.TTL = d
		}
	}
	if pb.VerifyOneIn != nil {
		if n := pb.GetVerifyOneIn(); n < 0 || n > 1<<31-1 {
			errs.add(errorf("remember.verify_one_in: want 0 (never) to %d, got %d", 1<<31-1, n))
		} else {
			r.VerifyOneIn = int(n)
		}
	}
	return r
}
