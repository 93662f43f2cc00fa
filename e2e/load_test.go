//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/streamsub/streamsub/internal/demoorigin"
)

// loadTarget is one page the load asks for and the body it must get back.
type loadTarget struct {
	path string
	want string
}

// loadTargets are the pages of the load: the small index page and a slow
// page (4 lines, 50 ms apart) so that streams are in flight at any moment.
func loadTargets() []loadTarget {
	var slow strings.Builder
	for i := range 4 {
		fmt.Fprintf(&slow, "<p>%d: %s</p>\n", i, demoorigin.OriginHost)
	}
	return []loadTarget{
		{"/", standard.Replace(demoorigin.IndexHTML)},
		{"/slow?ms=50&n=4", standard.Replace(slow.String())},
	}
}

// failure is one request of the load that did not get its rewritten page.
type failure struct {
	start, end time.Time
	reason     string
}

// loadRun is a bounded HTTP load through Envoy: workers loop over the targets
// until stopped or until max has passed.
type loadRun struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu       sync.Mutex
	requests int
	failures []failure
}

// startLoad starts workers that GET the targets from base (Envoy's URL).
func startLoad(base string, workers int, max time.Duration) *loadRun {
	ctx, cancel := context.WithTimeout(context.Background(), max)
	l := &loadRun{cancel: cancel}
	client := &http.Client{Timeout: 10 * time.Second,
		Transport: &http.Transport{DisableCompression: true, MaxIdleConnsPerHost: workers}}
	targets := loadTargets()
	for w := range workers {
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			for i := w; ctx.Err() == nil; i++ {
				tg := targets[i%len(targets)]
				start := time.Now()
				reason := get(ctx, client, base+tg.path, tg.want)
				if ctx.Err() != nil && reason != "" {
					return // cut off by the end of the load, not a failure
				}
				l.mu.Lock()
				l.requests++
				if reason != "" {
					l.failures = append(l.failures, failure{start, time.Now(), tg.path + ": " + reason})
				}
				l.mu.Unlock()
			}
		}()
	}
	return l
}

// get returns "" when url answers 200 with want, else what went wrong.
func get(ctx context.Context, c *http.Client, url, want string) string {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err.Error()
	}
	resp, err := c.Do(req)
	if err != nil {
		return err.Error()
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	switch {
	case err != nil:
		return fmt.Sprintf("status %d, reading body: %v", resp.StatusCode, err)
	case resp.StatusCode != http.StatusOK:
		return fmt.Sprintf("status %d", resp.StatusCode)
	case string(b) != want:
		return fmt.Sprintf("body not rewritten: %.80q", b)
	}
	return ""
}

// stop ends the load and returns the request count and the failures.
func (l *loadRun) stop() (int, []failure) {
	l.cancel()
	l.wg.Wait()
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.requests, l.failures
}

// summary counts failures by reason, for the test log.
func summary(fs []failure) string {
	n := map[string]int{}
	for _, f := range fs {
		n[f.reason]++
	}
	var lines []string
	for r, c := range n {
		lines = append(lines, fmt.Sprintf("%d × %s", c, r))
	}
	sort.Strings(lines)
	return strings.Join(lines, "; ")
}
