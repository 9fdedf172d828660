package upgrade

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/sstabletool/sstabletool/format"
)

// LiveError says why a data directory looks like a running node's.
type LiveError struct{ Why string }

func (e *LiveError) Error() string {
	return e.Why + "; stop the node first (nodetool drain, then stop Cassandra) and run again, or pass --force if you know it is stopped"
}

// commitLogGrace is how much newer than the newest sstable a commit log
// segment may be on a drained node: drain flushes every table, then
// closes the active segment, writing its last sync marker a moment after
// the last flush.
const commitLogGrace = time.Minute

// CommitLogDirs are the commit log directories of the data directories
// above the given table directories, where Cassandra puts them by default
// (<data>/../commitlog, beside <data>/<keyspace>/<table>-<id>/).
func CommitLogDirs(tables []*Table) []string {
	seen := map[string]bool{}
	var out []string
	for _, t := range tables {
		if t.Table == "" {
			continue
		}
		abs, err := filepath.Abs(t.Dir)
		if err != nil {
			continue
		}
		for strings.HasPrefix(filepath.Base(abs), ".") {
			abs = filepath.Dir(abs) // a secondary index's directory
		}
		cl := filepath.Join(filepath.Dir(filepath.Dir(filepath.Dir(abs))), "commitlog")
		if fi, err := os.Stat(cl); err == nil && fi.IsDir() && !seen[cl] {
			seen[cl] = true
			out = append(out, cl)
		}
	}
	return out
}

// checkCommitLog refuses when a commit log segment is newer than the
// newest sstable by more than a drain leaves: writes arrived after the
// last flush, so the node is running or was not drained.
func checkCommitLog(commitLogs []string, tables []*Table) error {
	var newestLog time.Time
	var logName string
	for _, dir := range commitLogs {
		ents, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, e := range ents {
			if !strings.HasPrefix(e.Name(), "CommitLog-") {
				continue
			}
			if fi, err := e.Info(); err == nil && fi.ModTime().After(newestLog) {
				newestLog, logName = fi.ModTime(), filepath.Join(dir, e.Name())
			}
		}
	}
	if logName == "" {
		return nil
	}
	// The newest sstable of the node: every table directory of the data
	// directories the commit logs belong to.
	var newest time.Time
	var sstName string
	for _, cl := range commitLogs {
		root := filepath.Join(filepath.Dir(cl), "data")
		filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			if e.IsDir() && (e.Name() == format.SnapshotsDir || e.Name() == format.BackupsDir) {
				return filepath.SkipDir
			}
			if !e.IsDir() && strings.HasSuffix(e.Name(), "-Data.db") {
				if fi, err := e.Info(); err == nil && fi.ModTime().After(newest) {
					newest, sstName = fi.ModTime(), p
				}
			}
			return nil
		})
	}
	for _, t := range tables {
		ents, _ := os.ReadDir(t.Dir)
		for _, e := range ents {
			if strings.HasSuffix(e.Name(), "-Data.db") {
				if fi, err := e.Info(); err == nil && fi.ModTime().After(newest) {
					newest, sstName = fi.ModTime(), filepath.Join(t.Dir, e.Name())
				}
			}
		}
	}
	if sstName == "" || newestLog.Sub(newest) <= commitLogGrace {
		return nil
	}
	return &LiveError{Why: fmt.Sprintf("the commit log %s was written at %s, %s after the newest sstable (%s): the node took writes after its last flush, so it is running or was stopped without nodetool drain",
		logName, newestLog.Format(time.RFC3339), newestLog.Sub(newest).Round(time.Second), sstName)}
}

// checkOpenFiles refuses when another process has a file open under the
// table or commit log directories (Linux /proc; silently nothing where
// /proc cannot be read).
func checkOpenFiles(dirs []string) error {
	procs, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	self := os.Getpid()
	var prefixes []string
	for _, d := range dirs {
		if real, err := filepath.EvalSymlinks(d); err == nil {
			if abs, err := filepath.Abs(real); err == nil {
				prefixes = append(prefixes, abs+string(filepath.Separator))
			}
		}
	}
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil || pid == self {
			continue
		}
		fdDir := filepath.Join("/proc", p.Name(), "fd")
		fds, err := os.ReadDir(fdDir)
		if err != nil {
			continue
		}
		for _, fd := range fds {
			target, err := os.Readlink(filepath.Join(fdDir, fd.Name()))
			if err != nil {
				continue
			}
			for _, pre := range prefixes {
				if strings.HasPrefix(target, pre) || target+string(filepath.Separator) == pre {
					comm, _ := os.ReadFile(filepath.Join("/proc", p.Name(), "comm"))
					return &LiveError{Why: fmt.Sprintf("process %d (%s) has %s open", pid, strings.TrimSpace(string(comm)), target)}
				}
			}
		}
	}
	return nil
}

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
			return &LiveError{Why: fmt.Sprintf("%s appeared during the upgrade", filepath.Join(w.dir, name))}
		case was.size != fi.Size() || !was.mtime.Equal(fi.ModTime()):
			return &LiveError{Why: fmt.Sprintf("%s was modified during the upgrade", filepath.Join(w.dir, name))}
		}
	}
	for name := range w.files {
		if !now[name] && !w.isOurs(name) {
			return &LiveError{Why: fmt.Sprintf("%s disappeared during the upgrade", filepath.Join(w.dir, name))}
		}
	}
	return nil
}
