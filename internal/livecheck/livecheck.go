// Package livecheck says whether a node's files are in use: the check every
// command that changes a stopped node's files in place makes first
// (upgrade, scrub, repaired-set, level-reset, relevel, util --cleanup,
// and the other offline tools). Cassandra's own offline tools only say
// "this command should be run with Cassandra stopped"; these checks refuse
// instead, and name what they saw.
//
// Two checks: OpenFiles (another process has a file under the directories
// open or mapped: a running Cassandra always has its sstables, its commit
// log segments and its transaction logs open) and CommitLog (a commit log
// segment newer than the newest sstable: the node took writes after its
// last flush, so it is running or was stopped without nodetool drain).
// Both read only; both are Linux-specific in what they can see and say
// nothing where /proc cannot be read.
package livecheck

import (
	"bufio"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/sstabletool/sstabletool/format"
)

// Error says why a data directory looks like a running node's.
type Error struct{ Why string }

func (e *Error) Error() string {
	return e.Why + "; stop the node first (nodetool drain, then stop Cassandra) and run again, or pass --force if you know it is stopped"
}

// commitLogGrace is how much newer than the newest sstable a commit log
// segment may be on a drained node: drain flushes every table, then
// closes the active segment, writing its last sync marker a moment after
// the last flush.
const commitLogGrace = time.Minute

// CommitLogDirs are the commit log directories of the data directories
// above the given table directories, where Cassandra puts them by default
// (<data>/../commitlog, beside <data>/<keyspace>/<table>-<id>/). A
// directory that is not named as a table's (<table>-<id>, or a secondary
// index's .<index> inside one) has none.
func CommitLogDirs(tableDirs []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, d := range tableDirs {
		// A live table's directory, or a secondary index's .<index>/ in
		// one (not a snapshot or backup: TableOf resolves those).
		td := format.TableOf(d)
		if abs, err := filepath.Abs(d); err != nil || !td.HasID() || td.Dir != abs {
			continue
		}
		cl := filepath.Join(filepath.Dir(filepath.Dir(filepath.Dir(td.BaseDir()))), "commitlog")
		if fi, err := os.Stat(cl); err == nil && fi.IsDir() && !seen[cl] {
			seen[cl] = true
			out = append(out, cl)
		}
	}
	return out
}

// CommitLog refuses when a commit log segment is newer than the newest
// sstable by more than a drain leaves: writes arrived after the last
// flush, so the node is running or was not drained. The newest sstable is
// looked for in the table directories and in every table directory of
// the data directories beside the commit logs (<commitlog>/../data).
func CommitLog(commitLogs, tableDirs []string) error {
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
	for _, d := range tableDirs {
		ents, _ := os.ReadDir(d)
		for _, e := range ents {
			if strings.HasSuffix(e.Name(), "-Data.db") {
				if fi, err := e.Info(); err == nil && fi.ModTime().After(newest) {
					newest, sstName = fi.ModTime(), filepath.Join(d, e.Name())
				}
			}
		}
	}
	if sstName == "" || newestLog.Sub(newest) <= commitLogGrace {
		return nil
	}
	return &Error{Why: fmt.Sprintf("the commit log %s was written at %s, %s after the newest sstable (%s): the node took writes after its last flush, so it is running or was stopped without nodetool drain",
		logName, newestLog.Format(time.RFC3339), newestLog.Sub(newest).Round(time.Second), sstName)}
}

// OpenFiles refuses when another process has a file under dirs open (one
// of its file descriptors) or mapped into its memory (Cassandra maps
// Data.db and the index files): it names the process, its command and the
// file. Linux /proc; silently nothing where /proc cannot be read, and
// nothing about processes this one may not inspect (another user's, for
// a user other than root).
func OpenFiles(dirs []string) error {
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
	if len(prefixes) == 0 {
		return nil
	}
	under := func(target string) bool {
		for _, pre := range prefixes {
			if strings.HasPrefix(target, pre) || target+string(filepath.Separator) == pre {
				return true
			}
		}
		return false
	}
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil || pid == self {
			continue
		}
		target := openUnder(p.Name(), under)
		if target == "" {
			target = mappedUnder(p.Name(), under)
		}
		if target != "" {
			comm, _ := os.ReadFile(filepath.Join("/proc", p.Name(), "comm"))
			return &Error{Why: fmt.Sprintf("process %d (%s) has %s open", pid, strings.TrimSpace(string(comm)), target)}
		}
	}
	return nil
}

// openUnder is the first file descriptor of process pid whose file is
// under one of the directories; "" when none is.
func openUnder(pid string, under func(string) bool) string {
	fdDir := filepath.Join("/proc", pid, "fd")
	fds, err := os.ReadDir(fdDir)
	if err != nil {
		return ""
	}
	for _, fd := range fds {
		target, err := os.Readlink(filepath.Join(fdDir, fd.Name()))
		if err == nil && under(target) {
			return target
		}
	}
	return ""
}

// mappedUnder is the first file process pid has mapped (/proc/<pid>/maps:
// the path is the sixth field, and may hold spaces) that is under one of
// the directories; "" when none is. A mapping outlives the descriptor it
// was made from.
func mappedUnder(pid string, under func(string) bool) string {
	f, err := os.Open(filepath.Join("/proc", pid, "maps"))
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		i := strings.IndexByte(line, '/')
		if i < 0 {
			continue
		}
		path := strings.TrimSuffix(line[i:], " (deleted)")
		if under(path) {
			return path
		}
	}
	return ""
}
