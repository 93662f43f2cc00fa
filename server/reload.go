package server

import (
	"context"
	"os"
	"time"

	"github.com/streamsub/streamsub/config/load"
)

// Reload loads the config file again. The new config is compiled fully
// before it replaces the old one in a single atomic store; streams already
// running keep the config they started with. If the file does not load,
// the old config stays, the failure is logged, counted
// (streamsub_config_reloads_total{result="failed"}) and shown by /healthz,
// and the loader's error is returned.
func (srv *Server) Reload() error {
	srv.reloadMu.Lock()
	defer srv.reloadMu.Unlock()
	return srv.reloadLocked(stat(srv.settings.ConfigPath))
}

func (srv *Server) reloadLocked(stamp fileStamp) error {
	path := srv.settings.ConfigPath
	cfg, err := load.File(path)
	if err != nil {
		srv.stamp = stamp // do not retry this version of the file
		srv.metrics.reloads.WithLabelValues(reloadFailed).Inc()
		srv.metrics.lastReloadOK.Set(0)
		prev := srv.status.Load()
		srv.status.Store(&reloadStatus{At: time.Now(), OK: false, Error: err.Error(), LoadedAt: prev.LoadedAt})
		srv.log.Error("config reload failed; keeping the previous config", "config", path, "error", err.Error())
		return err
	}
	srv.install(cfg, stamp)
	srv.metrics.reloads.WithLabelValues(reloadOK).Inc()
	srv.log.Info("config reloaded", "config", path, "rule_sets", len(cfg.RuleSets))
	return nil
}

// fileStamp identifies a version of the config file.
type fileStamp struct {
	modTime time.Time
	size    int64
	exists  bool
}

// stat follows symlinks, so a Kubernetes ConfigMap's "..data" swap counts
// as a change of the file.
func stat(path string) fileStamp {
	fi, err := os.Stat(path)
	if err != nil {
		return fileStamp{}
	}
	return fileStamp{modTime: fi.ModTime(), size: fi.Size(), exists: true}
}

// watch polls the config file every interval and reloads it when its
// modification time or size changes.
//
// Why polling rather than fsnotify: editors and config management replace
// the file by rename and Kubernetes swaps a symlinked directory, which an
// inotify watch on the file loses (the watch follows the old inode), while
// one os.Stat per interval sees every such change, costs nothing, needs no
// dependency and no re-arming logic. The price is up to one interval of
// delay, and SIGHUP remains for an immediate reload.
func (srv *Server) watch(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		now := stat(srv.settings.ConfigPath)
		srv.reloadMu.Lock()
		if now != srv.stamp && now.exists {
			srv.log.Info("config file changed", "config", srv.settings.ConfigPath)
			srv.reloadLocked(now)
		}
		srv.reloadMu.Unlock()
	}
}
