// Command applyratio times `streamsub apply` against regexpapply (Go's
// regexp on the same rules) on one page, interleaved: each round runs
// streamsub -runs times around one regexpapply run (half before, half
// after), so that both sides see the same machine load, and the round's
// ratio is the regexpapply time over the median streamsub time. It checks
// that both outputs are identical and prints the rounds and a summary as a
// Markdown table (scripts/apply-ratio.sh builds the binaries and the page).
//
//	applyratio -streamsub bin/streamsub -regexpapply bin/regexpapply \
//	    -config clone.yaml -workload clone -page page64.html -rounds 5 -runs 6
package main

import (
	"bytes"
	"flag"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"time"
)

func main() {
	ssBin := flag.String("streamsub", "", "streamsub `binary` (required)")
	reBin := flag.String("regexpapply", "", "regexpapply `binary` (required)")
	config := flag.String("config", "", "streamsub config `file` holding the workload's rules (required)")
	workload := flag.String("workload", "clone", "regexpapply workload `name` (the same rules as -config)")
	page := flag.String("page", "", "input `file` (required)")
	chunk := flag.Int("chunk-size", 16384, "streamsub apply -chunk-size")
	rounds := flag.Int("rounds", 5, "rounds (one regexpapply run each)")
	runs := flag.Int("runs", 6, "streamsub runs per round")
	dir := flag.String("dir", os.TempDir(), "`directory` for the two outputs")
	flag.Parse()
	if *ssBin == "" || *reBin == "" || *config == "" || *page == "" || *rounds < 1 || *runs < 1 {
		flag.Usage()
		os.Exit(2)
	}
	ssOut := filepath.Join(*dir, "applyratio-streamsub.out")
	reOut := filepath.Join(*dir, "applyratio-regexp.out")
	ss := []string{*ssBin, "apply", "-config", *config, "-chunk-size", fmt.Sprint(*chunk), "-o", ssOut, *page}
	re := []string{*reBin, "-workload", *workload, "-o", reOut, *page}

	// Warm-up (page cache, binaries) and the output check.
	mustRun(ss)
	mustRun(re)
	if err := sameFiles(ssOut, reOut); err != nil {
		fail(err)
	}

	fmt.Println("| round | streamsub median (min–max) | regexpapply | ratio |")
	fmt.Println("|---|---|---|---|")
	var ratios, ssAll, reAll []float64
	for r := 1; r <= *rounds; r++ {
		var times []float64
		for range *runs / 2 {
			times = append(times, mustRun(ss))
		}
		reT := mustRun(re)
		for range *runs - *runs/2 {
			times = append(times, mustRun(ss))
		}
		med := median(times)
		ratios = append(ratios, reT/med)
		ssAll = append(ssAll, times...)
		reAll = append(reAll, reT)
		fmt.Printf("| %d | %.1f ms (%.1f–%.1f) | %.3f s | %.1f× |\n", r, med*1e3, slices.Min(times)*1e3, slices.Max(times)*1e3, reT, reT/med)
	}
	mean, sd := meanSD(ratios)
	fmt.Printf("\nratio per round: median %.1f×, min %.1f×, max %.1f×, mean %.1f× ± %.1f (%d rounds × %d streamsub runs)\n",
		median(ratios), slices.Min(ratios), slices.Max(ratios), mean, sd, *rounds, *runs)
	fmt.Printf("all runs: streamsub median %.1f ms, regexpapply median %.3f s: %.1f×\n",
		median(ssAll)*1e3, median(reAll), median(reAll)/median(ssAll))
}

// mustRun runs argv and returns its wall time in seconds; it exits on a
// failure.
func mustRun(argv []string) float64 {
	cmd := exec.Command(argv[0], argv[1:]...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	t0 := time.Now()
	err := cmd.Run()
	d := time.Since(t0).Seconds()
	if err != nil {
		fail(fmt.Errorf("%s: %v\n%s", argv[0], err, stderr.Bytes()))
	}
	return d
}

func sameFiles(a, b string) error {
	x, err := os.ReadFile(a)
	if err != nil {
		return err
	}
	y, err := os.ReadFile(b)
	if err != nil {
		return err
	}
	if !bytes.Equal(x, y) {
		return fmt.Errorf("outputs differ: %s (%d bytes) and %s (%d bytes)", a, len(x), b, len(y))
	}
	return nil
}

func median(xs []float64) float64 {
	s := slices.Sorted(slices.Values(xs))
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func meanSD(xs []float64) (mean, sd float64) {
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	if len(xs) < 2 {
		return mean, 0
	}
	for _, x := range xs {
		sd += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(sd / float64(len(xs)-1))
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "applyratio:", err)
	os.Exit(1)
}
