package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/streamsub/streamsub/server"
)

func init() {
	register("serve", "run the ext_proc gRPC server (-config FILE)", runServe)
}

// runServe runs the server until SIGTERM or SIGINT, then drains (see
// server.Serve); SIGHUP reloads the config. Exit codes: 0 after a graceful stop, 2 for bad flags or a config
// that does not load, 1 when a listener fails.
func runServe(args []string) int {
	st := server.DefaultSettings()
	if err := st.FromEnv(os.Getenv); err != nil {
		fmt.Fprintf(os.Stderr, "streamsub serve: %v\n", err)
		return 2
	}
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: streamsub serve -config FILE [flags]\n\nEvery flag can also be set as STREAMSUB_<FLAG> (e.g. STREAMSUB_LOG_LEVEL=debug).")
		fs.PrintDefaults()
	}
	st.RegisterFlags(fs)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "streamsub serve: unexpected arguments %q\n", fs.Args())
		return 2
	}
	log := st.Logger(os.Stderr)
	srv, err := server.New(st, log)
	if err != nil {
		fmt.Fprintf(os.Stderr, "streamsub serve: %v\n", err)
		return 2
	}

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	go func() {
		// Once draining, a second SIGTERM or ^C kills the process at once.
		<-ctx.Done()
		stop()
	}()
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	go func() {
		for range hup {
			log.Info("SIGHUP: reloading config")
			srv.Reload() // logs and counts its own failure
		}
	}()

	if err := srv.Run(ctx); err != nil {
		log.Error("serve failed", "error", err.Error())
		return 1
	}
	return 0
}
