// Package nginxrun runs a real nginx for tests: Debian's nginx (whose
// ngx_http_sub_module, sub_filter, is built in) and its substitutions
// filter module (subs_filter, libnginx-mod-http-subs-filter), as
// `make nginx` installs them. Without them a test is skipped, or fails
// under CI=true, where `make test` installs them first.
package nginxrun

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// SubsModule is where Debian's package puts the substitutions filter
// module.
const SubsModule = "/usr/lib/nginx/modules/ngx_http_subs_filter_module.so"

// Binaries returns the nginx executable and the substitutions filter
// module, or skips the test (fails it under CI=true) when either is
// missing.
func Binaries(tb testing.TB) (nginx, subsModule string) {
	tb.Helper()
	missing := func(what string, err error) {
		tb.Helper()
		msg := what + " is not installed (Debian packages nginx and libnginx-mod-http-subs-filter; make nginx): " + err.Error()
		if os.Getenv("CI") == "true" {
			tb.Fatal(msg)
		}
		tb.Skip(msg)
	}
	nginx, err := exec.LookPath("nginx")
	if err != nil {
		missing("nginx", err)
	}
	if _, err := os.Stat(SubsModule); err != nil {
		missing("the subs_filter module", err)
	}
	return nginx, SubsModule
}

// FreeAddr returns a loopback address with a port nothing listens on
// now, for a server to listen on.
func FreeAddr(tb testing.TB) string {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// Server is an nginx running in the foreground for a test.
type Server struct {
	dir    string
	exited chan error
}

// Start runs nginx with configuration file conf, prefix dir and its error
// log in dir/error.log (the configuration must say `daemon off;` and keep
// its pid file and logs in dir). nginx stops when the test ends.
func Start(tb testing.TB, nginx, dir, conf string) *Server {
	tb.Helper()
	cmd := exec.Command(nginx, "-p", dir, "-c", conf, "-e", filepath.Join(dir, "error.log"))
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	s := &Server{dir: dir, exited: make(chan error, 1)}
	go func() { s.exited <- cmd.Wait() }()
	tb.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt) // fast shutdown
		err := <-s.exited
		s.exited <- err
	})
	return s
}

// WaitListening waits until nginx accepts connections at addr on network
// ("tcp" or "unix"), or fails the test with nginx's error log if it exits
// first or is not listening after 5 seconds.
func (s *Server) WaitListening(tb testing.TB, network, addr string) {
	tb.Helper()
	for range 100 {
		if c, err := net.Dial(network, addr); err == nil {
			c.Close()
			return
		}
		select {
		case err := <-s.exited:
			s.exited <- err
			tb.Fatalf("nginx exited (%v):\n%s", err, s.ErrorLog())
		case <-time.After(50 * time.Millisecond):
		}
	}
	tb.Fatalf("nginx is not listening on %s after 5s:\n%s", addr, s.ErrorLog())
}

// ErrorLog returns what nginx wrote to its error log so far.
func (s *Server) ErrorLog() string {
	log, _ := os.ReadFile(filepath.Join(s.dir, "error.log"))
	return string(log)
}
