package embed

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Pull sentinels.
var (
	// ErrRemoteMissing: the repository has no file the model needs.
	ErrRemoteMissing = errors.New("embed: file not on the model server")
	// ErrDownload: the model server could not be reached or failed.
	ErrDownload = errors.New("embed: download failed")
)

// PullOptions configure Registry.Pull. The zero value means defaults.
type PullOptions struct {
	// Endpoint is the Hugging Face-compatible server (default
	// https://huggingface.co); files are read from
	// Endpoint/REPO/resolve/main/FILE.
	Endpoint string
	// Client makes the requests (default: a client that gives up on a
	// connection within 5 s and on response headers within 15 s).
	Client *http.Client
	// Name is the model's name in the registry (default: REPO's last part).
	Name string
	// Progress, when set, is called as files download, then as Import
	// checks and copies them.
	Progress func(Progress)
}

// pullFiles are fetched from a repository; optional ones may be missing.
var pullFiles = [...]struct {
	name     string
	optional bool
}{
	{"config.json", false}, {"tokenizer.json", false}, {"model.safetensors", false},
	{"modules.json", true}, {"1_Pooling/config.json", true}, {"sentence_bert_config.json", true},
	{"config_sentence_transformers.json", true},
}

// ValidRepo reports whether repo names a Hugging Face repository
// (OWNER/NAME).
func ValidRepo(repo string) error {
	owner, name, ok := strings.Cut(repo, "/")
	if !ok || owner == "" || name == "" || strings.Contains(name, "/") || strings.Contains(repo, "..") || strings.ContainsAny(repo, `\?#`) {
		return fmt.Errorf("%w: %q is not a Hugging Face repository name like sentence-transformers/all-MiniLM-L6-v2", ErrModelName, repo)
	}
	return nil
}

// Pull downloads the sentence-transformers model repo (OWNER/NAME) from
// a Hugging Face-compatible server into a temporary directory and imports
// it (Import). It is the only code in cairn that uses the network, and
// only when asked to.
func (r *Registry) Pull(ctx context.Context, repo string, opts PullOptions) (*Manifest, error) {
	if err := ValidRepo(repo); err != nil {
		return nil, err
	}
	if opts.Endpoint == "" {
		opts.Endpoint = "https://huggingface.co"
	}
	opts.Endpoint = strings.TrimSuffix(opts.Endpoint, "/")
	if opts.Client == nil {
		opts.Client = &http.Client{Transport: &http.Transport{
			Proxy:                 http.ProxyFromEnvironment,
			DialContext:           (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
			TLSHandshakeTimeout:   5 * time.Second,
			ResponseHeaderTimeout: 15 * time.Second,
		}}
	}
	if opts.Name == "" {
		opts.Name = repo[strings.LastIndexByte(repo, '/')+1:]
	}
	if err := ValidName(opts.Name); err != nil {
		return nil, err
	}
	if _, err := os.Stat(r.Path(opts.Name)); err == nil {
		return nil, fmt.Errorf("%w: %q in %s", ErrModelExists, opts.Name, r.dir)
	}
	tmp, err := os.MkdirTemp("", "cairn-pull-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	for _, f := range pullFiles {
		url := opts.Endpoint + "/" + repo + "/resolve/main/" + f.name
		err := download(ctx, opts.Client, url, filepath.Join(tmp, filepath.FromSlash(f.name)), f.name, opts.Progress)
		switch {
		case errors.Is(err, ErrRemoteMissing) && f.optional:
		case errors.Is(err, ErrRemoteMissing):
			return nil, fmt.Errorf("%w: %s has no %s on %s (a sentence-transformers BERT model with safetensors weights is needed)", ErrRemoteMissing, repo, f.name, opts.Endpoint)
		case err != nil:
			return nil, err
		}
	}
	return r.Import(ctx, tmp, ImportOptions{Name: opts.Name, Source: opts.Endpoint + "/" + repo, Progress: opts.Progress})
}

func download(ctx context.Context, client *http.Client, url, dst, rel string, progress func(Progress)) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrDownload, err)
	}
	resp, err := client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("%w: %w", ErrDownload, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNotFound {
		return fmt.Errorf("%w: %s", ErrRemoteMissing, url)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%w: %s: %s", ErrDownload, url, resp.Status)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	defer out.Close()
	total := resp.ContentLength
	if total < 0 {
		total = -1
	}
	pc := &progressCounter{p: Progress{Stage: "download", File: rel, Total: total}, progress: progress}
	report(progress, pc.p)
	if _, err := io.Copy(io.MultiWriter(out, pc), resp.Body); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("%w: %s: %w", ErrDownload, url, err)
	}
	return out.Sync()
}
