package split

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/sstabletool/sstabletool/convert"
	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/internal/upgrade"
	"github.com/sstabletool/sstabletool/internal/vfs"
	"github.com/sstabletool/sstabletool/internal/writer"
)

// InPlaceOptions controls a rewrite of a stopped node's sstables in their
// own directories.
type InPlaceOptions struct {
	Options
	// Op is the operation the transaction logs are named after
	// (txnlog.OpUnknown for a split, as sstablesplit's offline
	// transaction is; txnlog.OpCleanup for a filter).
	Op string
	// Snapshot, when set, names the snapshot (<Snapshot>-<ms>, in each
	// table directory's snapshots/) that every replaced sstable is
	// hard-linked into first: "pre-split", as sstablesplit's.
	Snapshot string
	// Force skips the checks that the node is stopped (no process holds a
	// file open there, the commit log is not newer than the sstables, no
	// file changes during the run).
	Force bool
	// Jobs is how many sstables are rewritten at once (0: one).
	Jobs int
	// CommitLogs are the node's commit log directories (nil: commitlog/
	// beside each data directory).
	CommitLogs []string
	// Log, when set, hears the transactions' steps as they happen
	// (internal/upgrade's lines: logs recovered, sstables replaced).
	Log func(line string)
	// Words name the rewrite in what is said of the indexes: "the split",
	// "splits" (InPlace is set).
	Words convert.NoteWords
	// Notes, when set, hears what is said of each index before anything
	// is written (else Log does): the sstables the rewrite replaces lose
	// their SAI and SASI files, the others keep them.
	Notes func(line string)
}

// NodeReport is what a rewrite in place did.
type NodeReport struct {
	// Snapshot names the snapshot holding every sstable replaced, as it
	// was; empty when none was replaced or none was asked for.
	Snapshot string    `json:"snapshot,omitempty"`
	SSTables []*Result `json:"sstables"`
	// Recovered are the transaction logs of killed runs finished or
	// rolled back first.
	Recovered []string  `json:"recovered"`
	Skipped   []Failure `json:"skipped"`
	Failed    []Failure `json:"failed"`
	// Indexes say what the rewrite does to each index of the tables whose
	// sstables it replaces or copies (convert.IndexNote).
	Indexes []convert.IndexNote `json:"indexes,omitempty"`
}

// Failure is an sstable or path and why it was not rewritten.
type Failure struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// notNamed is the plan's reason for the sstables of a directory that the
// command line did not name (an sstable named among others in its
// directory); they are not reported.
const notNamed = "not named"

// InPlace rewrites, on a stopped node, the sstables paths name (sstable
// files, or data, keyspace or table directories: every live sstable under
// them; snapshots/ and backups/ are left alone), each replaced by its
// outputs in its own directory through Cassandra's transaction log as
// sstabletool upgrade replaces sstables (internal/upgrade, Outputs): one
// transaction per sstable, an ADD record for each output before any of its
// files exists, the outputs verified, then REMOVE and COMMIT. A kill at any
// moment leaves, after the next run or Cassandra's own startup, either the
// source or all of its outputs live, never both and never a part. An
// sstable that needs nothing (smaller than the size; a filter that drops
// none of its partitions) gets no transaction; one whose every partition a
// filter drops is removed by REMOVE and COMMIT alone.
func InPlace(paths []string, o InPlaceOptions) (*NodeReport, error) {
	return inPlaceOn(vfs.Default, paths, o)
}

func inPlaceOn(fsys vfs.FS, paths []string, o InPlaceOptions) (*NodeReport, error) {
	rep := &NodeReport{SSTables: []*Result{}, Recovered: []string{}, Skipped: []Failure{}, Failed: []Failure{}}
	dirs, sel, err := selection(paths)
	if err != nil {
		return nil, err
	}
	plan, err := upgrade.NewPlanSelect(dirs, o.To, sel)
	if err != nil {
		return nil, err
	}
	for _, s := range plan.Skipped {
		if s.Reason != notNamed {
			rep.Skipped = append(rep.Skipped, Failure{s.Path, s.Reason})
		}
	}
	for _, f := range plan.Failed {
		rep.Failed = append(rep.Failed, Failure{f.Path, f.Reason})
	}
	snapshot := ""
	if o.Snapshot != "" {
		snapshot = fmt.Sprintf("%s-%d", o.Snapshot, time.Now().UnixMilli())
	}
	var mu sync.Mutex
	results := map[string]*Result{}
	snapped := false
	// Whether each sstable needs the rewrite is decided before anything
	// is written (upgrade.Options.Rewrites), so that what is said of the
	// indexes counts only the sstables replaced; the rewrite takes the
	// decision from there.
	decided := map[string]decision{}
	decide := func(src string) bool {
		d := decideOne(src, o.Options)
		mu.Lock()
		decided[src] = d
		mu.Unlock()
		return d.err != nil || d.why == ""
	}
	rewrite := func(src string, out upgrade.Outputs, prog func(done, total int64)) (upgrade.Rewritten, error) {
		so := o.Options
		so.Progress = prog
		rw, err := open(src, so)
		if err != nil {
			return upgrade.Rewritten{}, err
		}
		defer rw.close()
		defer func() {
			mu.Lock()
			results[src] = rw.res
			mu.Unlock()
		}()
		mu.Lock()
		d, ok := decided[src]
		mu.Unlock()
		if !ok || d.err != nil {
			d = rw.decide()
		}
		if d.err != nil {
			return upgrade.Rewritten{}, d.err
		}
		why := d.why
		rw.res.named = d.named
		if why != "" {
			rw.res.Unchanged, rw.res.Why = true, why
			return upgrade.Rewritten{Unchanged: true}, nil
		}
		if snapshot != "" {
			if err := upgrade.Snapshot(out, src, snapshot); err != nil {
				return upgrade.Rewritten{}, err
			}
			mu.Lock()
			snapped = true
			mu.Unlock()
		}
		err = rw.run(&txnOutputs{out: out})
		if err == nil && len(rw.made) > 0 && !o.NoVerify {
			err = rw.verifyOutputs()
		}
		if err != nil {
			rw.res.Outputs = rw.res.Outputs[:0]
		}
		return upgrade.Rewritten{Partitions: rw.res.Partitions, Verified: rw.res.Verified, To: rw.to.Name,
			Before: rw.res.Before, After: rw.res.After}, err
	}
	jobs := o.Jobs
	if jobs <= 0 {
		jobs = 1
	}
	uo := upgrade.Options{Force: o.Force, Jobs: jobs, Access: o.Access, CommitLogs: o.CommitLogs, Progress: o.Progress,
		Log: o.Log, Op: o.Op, Rewriter: rewrite, Words: o.Words, Rewrites: decide, Notes: o.Notes}
	urep, runErr := upgrade.RunOn(fsys, plan, uo)
	rep.Indexes = urep.Indexes
	for _, r := range urep.Recovered {
		line := r.Log + ": " + r.Action
		if r.Problem != "" {
			line += ": " + r.Problem
		}
		rep.Recovered = append(rep.Recovered, line)
	}
	for _, f := range append(urep.Failed[len(plan.Failed):], urep.Problems...) {
		rep.Failed = append(rep.Failed, Failure{f.Path, f.Reason})
	}
	failed := map[string]bool{}
	for _, f := range rep.Failed {
		failed[f.Path] = true
	}
	for _, t := range plan.Tables {
		for _, src := range t.Upgrade {
			if r := results[src]; r != nil && !failed[src] {
				rep.SSTables = append(rep.SSTables, r)
			}
		}
	}
	if snapped {
		rep.Snapshot = snapshot
	}
	rep.CountIndexes()
	return rep, runErr
}

// decision is whether an sstable needs the rewrite: why not ("" when it
// does), and the filter's keys found on the way (Result.named).
type decision struct {
	why   string
	named [][]byte
	err   error
}

// decideOne opens the sstable at src to decide whether it needs the
// rewrite.
func decideOne(src string, o Options) decision {
	rw, err := open(src, o)
	if err != nil {
		return decision{err: err}
	}
	defer rw.close()
	return rw.decide()
}

// decide says whether the sstable needs the rewrite in place: a split's
// (no larger than the size, or one partition: unneeded) and a filter's
// (it drops none of its partitions: the sstable is left as it is).
func (rw *rewriter) decide() decision {
	why := rw.unneeded()
	if why == "" && rw.filter != nil {
		drops, err := rw.dropsAny()
		if err != nil {
			return decision{err: err}
		}
		if !drops {
			why = "the filter drops none of its partitions"
		}
	}
	return decision{why: why, named: rw.res.named}
}

// CountIndexes fills in each index note's Done (convert.IndexDone) from
// the sstables rewritten: how many of those the note counted were
// replaced or copied, and how many sstables were written for them.
func (rep *NodeReport) CountIndexes() {
	done := map[string]*Result{}
	for _, r := range rep.SSTables {
		if !r.Unchanged {
			done[absPath(r.Source)] = r
		}
	}
	for i := range rep.Indexes {
		n := &rep.Indexes[i]
		d := &convert.IndexDone{}
		for _, src := range n.Sources() {
			if r := done[absPath(src)]; r != nil {
				d.Rewritten++
				d.Written += len(r.Outputs)
			}
		}
		n.Done = d
	}
}

func absPath(p string) string {
	if abs, err := filepath.Abs(p); err == nil {
		return abs
	}
	return filepath.Clean(p)
}

// selection turns the command line's paths into the directories to plan
// and the choice of sstables in them: every one under a directory
// argument, and those named by a file argument (any of their components).
func selection(paths []string) (dirs []string, sel func(format.Descriptor) string, err error) {
	named := map[string]bool{}
	var under []string
	seenDir := map[string]bool{}
	addDir := func(d string) {
		if !seenDir[d] {
			seenDir[d] = true
			dirs = append(dirs, d)
		}
	}
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			return nil, nil, err
		}
		if fi.IsDir() {
			abs, err := filepath.Abs(p)
			if err != nil {
				return nil, nil, err
			}
			under = append(under, abs)
			addDir(p)
			continue
		}
		d, _, err := format.ParseDescriptor(p)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: not an sstable component, nor a directory", p)
		}
		abs, err := filepath.Abs(d.Path(format.ComponentData))
		if err != nil {
			return nil, nil, err
		}
		named[abs] = true
		addDir(d.Dir)
	}
	sel = func(d format.Descriptor) string {
		abs, err := filepath.Abs(d.Path(format.ComponentData))
		if err != nil {
			return err.Error()
		}
		if named[abs] {
			return ""
		}
		for _, u := range under {
			if abs == u || strings.HasPrefix(abs, u+string(filepath.Separator)) {
				return ""
			}
		}
		return notNamed
	}
	return dirs, sel, nil
}

// dropsAny reports whether the filter drops any partition of the source:
// by key lookups when it drops keys alone, else by a walk of the keys.
func (rw *rewriter) dropsAny() (bool, error) {
	f := rw.filter
	if f.Keep.Empty() && f.Drop != nil && len(f.Drop.Ranges) == 0 {
		keys := make([][]byte, 0, len(f.Drop.Keys))
		for k := range f.Drop.Keys {
			keys = append(keys, []byte(k))
		}
		pos, err := rw.src.FindPositions(keys)
		return len(pos) > 0, err
	}
	part := rw.src.Partitioner()
	found := false
	err := rw.src.ScanPartitions(sstable.ScanOptions{SkipCells: true}, func(p *sstable.PartitionSummary) error {
		w, named := f.writes(part, p.Key)
		if named {
			rw.res.named = append(rw.res.named, slices.Clone(p.Key))
		}
		if !w {
			found = true
			return io.EOF
		}
		return nil
	})
	if found {
		rw.res.named = nil // the rewrite names them all again
	}
	return found, err
}

// txnOutputs creates the outputs through the transaction: each one's id
// is the next free one in the table directory, its ADD record logged
// before any of its files exists.
type txnOutputs struct{ out upgrade.Outputs }

func (t *txnOutputs) newSSTable(v format.Version) (format.Descriptor, writer.Output, error) {
	d, files, err := t.out.New(v)
	return d, files, err
}

func (t *txnOutputs) stagedDir() string { return t.out.Dir() }
