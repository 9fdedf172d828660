package upgrade

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/sstabletool/sstabletool/internal/livecheck"
)

// The checks that the node is stopped are internal/livecheck's, shared by
// every command that changes a node's files; watch, below, is the
// upgrade's own: a file changing under it while it runs.

// watch notices files under a table directory that change while the
// upgrade runs, other than the ones it writes and deletes itself.
type watch struct {
	mu      sync.Mutex
	dir     string
	files   map[string]fileState
	ours    map[string]bool // file name prefixes (and log names) the upgrade owns
	checked time.Time
}

type fileState struct {
	size  int64
	mtime time.Time
}

func newWatch(dir string) (*watch, error) {
	w := &watch{dir: dir, files: map[string]fileState{}, ours: map[string]bool{}}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	for _, e := range ents {
		if e.IsDir() {
			continue
		}
		if fi, err := e.Info(); err == nil {
			w.files[e.Name()] = fileState{fi.Size(), fi.ModTime()}
		}
	}
	return w, nil
}

func (w *watch) own(prefix string) {
	w.mu.Lock()
	w.ours[prefix] = true
	w.mu.Unlock()
}

func (w *watch) isOurs(name string) bool {
	for p := range w.ours {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// check compares the directory with what it held at the start; files the
// upgrade owns are not counted. A full listing is made at most once a
// second unless force.
func (w *watch) check(force bool) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !force && time.Since(w.checked) < time.Second {
		return nil
	}
	w.checked = time.Now()
	ents, err := os.ReadDir(w.dir)
	if err != nil {
		return err
	}
	now := map[string]bool{}
	for _, e := range ents {
		if e.IsDir() {
			continue
		}
		name := e.Name()
		now[name] = true
		if w.isOurs(name) {
			continue
		}
		fi, err := e.Info()
		if err != nil {
			continue
		}
		was, ok := w.files[name]
		switch {
		case !ok:
			return &livecheck.Error{Why: fmt.Sprintf("%s appeared during the upgrade", filepath.Join(w.dir, name))}
		case was.size != fi.Size() || !was.mtime.Equal(fi.ModTime()):
			return &livecheck.Error{Why: fmt.Sprintf("%s was modified during the upgrade", filepath.Join(w.dir, name))}
		}
	}
	for name := range w.files {
		if !now[name] && !w.isOurs(name) {
			return &livecheck.Error{Why: fmt.Sprintf("%s disappeared during the upgrade", filepath.Join(w.dir, name))}
		}
	}
	return nil
}
