package console

import (
	"embed"
	"encoding/json"
	"io/fs"
	"net/http"
	"net/http/httputil"
	"net/url"
	"path"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
)

//go:embed dist
var dist embed.FS

// Options configure the console's handler.
type Options struct {
	// DgraphHTTP is the Dgraph face's HTTP address (host:port) the DQL
	// editor's queries are forwarded to; "" when that face is off.
	DgraphHTTP string
	// Cluster answers the cluster view (GET /console/cluster.json); nil:
	// that path answers 503.
	Cluster ClusterSource
	// Gather reads this process's own metrics, for the view's member
	// marked Self (nil: none).
	Gather prometheus.Gatherer
}

// Prefix is the path below which the console's own files live.
const Prefix = "/console/"

// contentTypes are the types of the files dist holds, by extension.
var contentTypes = map[string]string{
	".html": "text/html; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
	".css":  "text/css; charset=utf-8",
	".svg":  "image/svg+xml",
	".png":  "image/png",
	".json": "application/json",
}

type handler struct {
	files  fs.FS
	opts   Options
	dgraph http.Handler // nil: the Dgraph face is off
	client *http.Client // reads members' /metrics
}

// Handler returns the console's handler for "/", "/console/…" and
// "POST /console/dgraph/query" (see the package documentation).
func Handler(opts Options) http.Handler {
	files, err := fs.Sub(dist, "dist")
	if err != nil {
		panic(err) // dist is embedded: a missing directory is a build error
	}
	h := &handler{files: files, opts: opts, client: &http.Client{Timeout: scrapeTimeout}}
	if opts.DgraphHTTP != "" {
		target := &url.URL{Scheme: "http", Host: opts.DgraphHTTP}
		h.dgraph = &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(target)
			r.Out.URL.Path = "/query"
			r.Out.URL.RawPath = ""
		}}
	}
	return h
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Path
	switch {
	case p == "/" || p == Prefix || p == Prefix+"index.html":
		h.file(w, r, "index.html", "no-cache")
	case p == Prefix+"config.json":
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-cache")
		json.NewEncoder(w).Encode(map[string]string{"dgraph": h.opts.DgraphHTTP})
	case p == Prefix+"cluster.json":
		h.cluster(w, r)
	case p == Prefix+"dgraph/query":
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			http.Error(w, "POST a DQL query", http.StatusMethodNotAllowed)
			return
		}
		if h.dgraph == nil {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusServiceUnavailable)
			w.Write([]byte(`{"error":{"code":"UNAVAILABLE","message":"the Dgraph face is off on this server: start weft serve with --dgraph-http ADDR, or a cluster with weft cluster up --dgraph","retryable":false}}` + "\n"))
			return
		}
		h.dgraph.ServeHTTP(w, r)
	case strings.HasPrefix(p, Prefix+"assets/"):
		name := strings.TrimPrefix(p, Prefix)
		if path.Clean(name) != name {
			http.NotFound(w, r)
			return
		}
		h.file(w, r, name, "public, max-age=31536000, immutable")
	default:
		http.NotFound(w, r)
	}
}

// file answers one embedded file with its content type and cache policy.
func (h *handler) file(w http.ResponseWriter, r *http.Request, name, cache string) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	body, err := fs.ReadFile(h.files, name)
	if err != nil {
		http.NotFound(w, r)
		return
	}
	ct, ok := contentTypes[path.Ext(name)]
	if !ok {
		ct = "application/octet-stream"
	}
	w.Header().Set("Content-Type", ct)
	w.Header().Set("Cache-Control", cache)
	w.Header().Set("X-Content-Type-Options", "nosniff")
	if r.Method == http.MethodHead {
		return
	}
	w.Write(body)
}
