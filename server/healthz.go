package server

import (
	"encoding/json"
	"net/http"
	"time"
)

// healthzBody is the JSON that /healthz returns.
type healthzBody struct {
	Status     string   `json:"status"` // serving or draining
	Config     string   `json:"config"`
	RuleSets   []string `json:"rule_sets"`
	LoadedAt   string   `json:"loaded_at"`
	LastReload struct {
		At    string `json:"at"`
		OK    bool   `json:"ok"`
		Error string `json:"error,omitempty"`
	} `json:"last_reload"`
}

// healthz answers 200 while serving and 503 while draining. A failed reload
// does not make it unhealthy (the previous config still serves) but shows
// in last_reload.
func (srv *Server) healthz(w http.ResponseWriter, _ *http.Request) {
	var b healthzBody
	cfg := srv.Config()
	b.Config = cfg.Source
	for _, rs := range cfg.RuleSets {
		b.RuleSets = append(b.RuleSets, rs.Name)
	}
	st := srv.status.Load()
	b.LoadedAt = st.LoadedAt.UTC().Format(time.RFC3339Nano)
	b.LastReload.At = st.At.UTC().Format(time.RFC3339Nano)
	b.LastReload.OK = st.OK
	b.LastReload.Error = st.Error
	code := http.StatusOK
	b.Status = "serving"
	if srv.draining.Load() {
		b.Status = "draining"
		code = http.StatusServiceUnavailable
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(&b)
}
