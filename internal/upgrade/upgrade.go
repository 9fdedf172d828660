// Package upgrade rewrites, in place, every sstable of a stopped node's
// data directory that is older than a target version (nb/nc and older to
// oa by default): what Cassandra's sstableupgrade does, offline and
// without a JVM. Each sstable is replaced in its own directory under the
// next free id, through the same transaction log Cassandra writes
// (package format/txnlog), so that after a crash at any instant either the
// next run or Cassandra's own startup ends with exactly one copy of every
// sstable's data; see txn for the steps. Snapshots and backups are left
// alone.
package upgrade

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/sstabletool/sstabletool/convert"
	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/stats"
	"github.com/sstabletool/sstabletool/internal/format/txnlog"
	"github.com/sstabletool/sstabletool/internal/livecheck"
	"github.com/sstabletool/sstabletool/internal/vfs"
	"github.com/sstabletool/sstabletool/internal/words"
	"github.com/sstabletool/sstabletool/reader"
)

// Options controls an upgrade.
type Options struct {
	// Verify re-reads each new sstable (verify's checks, and its content
	// compared with the old one's cell by cell) before the old one is
	// removed.
	Verify bool
	// KeepSource leaves the old sstables in place (sstableupgrade -k): both
	// copies are then live.
	KeepSource bool
	// Force skips the checks that the node is stopped.
	Force bool
	// DryRun changes nothing: the report says what would be rewritten and
	// saved, exactly (convert.Estimate), and what leftovers would be
	// finished or rolled back.
	DryRun bool
	// Jobs is how many sstables are rewritten at once (0: one per core).
	Jobs int
	// Access is how sstables are read.
	Access reader.Access
	// CommitLogs are the node's commit log directories; nil: the
	// "commitlog" directory beside each data directory, if there is one.
	CommitLogs []string
	// Progress, when set, hears the source Data.db bytes done of all.
	Progress func(done, total int64)
	// Log, when set, hears one line per step as it happens.
	Log func(line string)
	// Op is the operation the transaction logs name (their file name and
	// what the next run recovers): txnlog.OpUpgrade unless set.
	Op string
	// Rewriter, when set, replaces each sstable in place of convert (scrub
	// does); DryRun is then refused.
	Rewriter Rewriter
	// Words name the rewrite in what Run says of the indexes: What is
	// "the upgrade" unless set ("the scrub", "the split"); a Verb for a
	// Rewriter whose outputs are not one per source (split, filter).
	// InPlace is always true.
	Words convert.NoteWords
	// Rewrites, when set with Rewriter, says before anything is written
	// whether the Rewriter will replace the sstable src (false: it will
	// leave it Unchanged, as a split leaves one smaller than its size), so
	// that what is said of the indexes counts only those; it is asked
	// once per sstable, Jobs at a time.
	Rewrites func(src string) bool
	// Notes, when set, hears what is said of each index before anything
	// is written, in place of Log.
	Notes func(line string)
}

// A Rewriter replaces the sstable whose Data.db is src: it writes each new
// sstable through out.New, which gives it an id and logs its ADD record
// before any file exists, and says what it did. It may write none (every
// partition lost: the old sstable is removed) or several. With Unchanged
// set and nothing written the old sstable stays and no transaction is
// made.
type Rewriter func(src string, out Outputs, progress func(done, total int64)) (Rewritten, error)

// Outputs creates the new sstables of one rewrite in the old one's
// directory.
type Outputs interface {
	New(v format.Version) (format.Descriptor, convert.Output, error)
	// Dir is the table directory.
	Dir() string
	// Link hard-links a file into the table directory's tree (a
	// pre-rewrite snapshot) through the run's file system.
	Link(oldname, newname string) error
	MkdirAll(dir string) error
	SyncDir(dir string) error
}

// Rewritten is what a Rewriter did.
type Rewritten struct {
	Unchanged  bool
	Partitions int64
	Verified   bool
	// Problem: the rewrite was refused on what it found (scrub's abort
	// mode); it is rolled back and reported with Report.Problems.
	Problem    bool
	Components []convert.Component
	// To is the version written (the report's), Before and After the
	// bytes of the old sstable and of what replaced it.
	To            string
	Before, After int64
}

// Rewrite is one sstable rewritten (or, in a dry run, to be).
type Rewrite struct {
	Source     string              `json:"source"`
	Output     string              `json:"output"`
	Keyspace   string              `json:"keyspace,omitempty"`
	Table      string              `json:"table,omitempty"`
	From       string              `json:"from"`
	To         string              `json:"to"`
	Partitions int64               `json:"partitions"`
	Before     int64               `json:"bytes_before"`
	After      int64               `json:"bytes_after"`
	Verified   bool                `json:"verified"`
	KeptSource bool                `json:"kept_source,omitempty"`
	Components []convert.Component `json:"components"`
	// Outputs are the Data.db of the sstables written after Output (a
	// scrub's out-of-order partitions); Unchanged: nothing needed
	// rewriting, the old sstable is kept and no transaction was made.
	Outputs   []string `json:"outputs,omitempty"`
	Unchanged bool     `json:"unchanged,omitempty"`
	// Statistics are the source Statistics.db's bounds and counts that
	// were not its rows': the output holds the rows' own
	// (convert.Result.StatisticsRecollected).
	Statistics []stats.Mismatch `json:"statistics_recollected,omitempty"`
}

// Where names the table ("keyspace.table"), or the directory when its
// place in a data directory does not say.
func (rw *Rewrite) Where() string {
	if rw.Table != "" {
		return rw.Keyspace + "." + rw.Table
	}
	return filepath.Dir(rw.Source)
}

// Report is what an upgrade did (or, dry, would do).
type Report struct {
	DryRun    bool       `json:"dry_run"`
	To        string     `json:"to"`
	Recovered []Recovery `json:"recovered"`
	Rewritten []Rewrite  `json:"rewritten"`
	Skipped   []Skip     `json:"skipped"`
	Failed    []Skip     `json:"failed"`
	// Problems are sstables whose rewrite failed verification (it was
	// rolled back; the old sstable is untouched).
	Problems []Skip `json:"problems,omitempty"`
	Before   int64  `json:"bytes_before"`
	After    int64  `json:"bytes_after"`
	Saved    int64  `json:"bytes_saved"`
	// Warnings: in a dry run, why a real run would refuse to start.
	Warnings []string `json:"warnings,omitempty"`
	// Indexes say, for each index of the tables rewritten, what Cassandra
	// does about the sstables rewritten (convert.IndexNote): their SAI and
	// SASI files go with them, being right only for the Data.db they were
	// built from.
	Indexes []convert.IndexNote `json:"indexes,omitempty"`
}

type task struct {
	t   *Table
	src string // Data.db
	w   *watch
}

// Run carries out the plan. It returns the report and, when the node
// looks live, an error that stopped it early;
// sstables that failed on their own are in Report.Failed and Problems.
func Run(p *Plan, o Options) (*Report, error) { return RunOn(vfs.Default, p, o) }

// RunOn is Run making every change to the disk through fsys: the seam
// where tests, the command's included, inject crashes, fsync errors and a
// full disk (internal/vfs/errorfs).
func RunOn(fsys vfs.FS, p *Plan, o Options) (*Report, error) {
	d := newDisk(fsys)
	rep := &Report{DryRun: o.DryRun, To: p.To.Name, Recovered: []Recovery{}, Rewritten: []Rewrite{},
		Skipped: append([]Skip{}, p.Skipped...), Failed: append([]Skip{}, p.Failed...)}
	say := func(format string, args ...any) {
		if o.Log != nil {
			o.Log(fmt.Sprintf(format, args...))
		}
	}

	if !o.Force {
		cls := o.CommitLogs
		if cls == nil {
			cls = livecheck.CommitLogDirs(p.tableDirs())
		}
		err := livecheck.OpenFiles(append(append([]string{}, cls...), p.tableDirs()...))
		if err == nil {
			err = livecheck.CommitLog(cls, p.tableDirs())
		}
		if err != nil {
			if !o.DryRun {
				return rep, err
			}
			rep.Warnings = append(rep.Warnings, err.Error())
		}
	}

	var tasks []task
	for _, t := range p.Tables {
		recs, err := d.recover(t, o.DryRun)
		for _, r := range recs {
			rep.Recovered = append(rep.Recovered, r)
			switch r.Action {
			case "finished":
				say("found %s: the interrupted upgrade had committed; %s %s of the sstable it replaced", r.Log, past(o.DryRun, "deleted", "would delete"), words.Plural(len(r.Deleted), "file"))
			case "rolled back":
				say("found %s: the interrupted upgrade had not committed; %s %s of the sstable it was writing", r.Log, past(o.DryRun, "deleted", "would delete"), words.Plural(len(r.Deleted), "file"))
			default:
				say("found %s: %s", r.Log, r.Problem)
			}
		}
		if err != nil {
			return rep, err
		}
		refused := false
		for _, r := range recs {
			refused = refused || r.Action == "refused"
		}
		if refused {
			for _, s := range t.Upgrade {
				rep.Failed = append(rep.Failed, Skip{s, "not rewritten: a transaction log in its directory needs attention first (see recovered)"})
			}
			continue
		}
		var w *watch
		if !o.DryRun && !o.Force {
			if w, err = newWatch(t.Dir); err != nil {
				return rep, err
			}
		}
		for _, s := range t.Upgrade {
			tasks = append(tasks, task{t: t, src: s, w: w})
		}
	}

	// What the plan skipped as a leftover of a log just recovered is gone.
	gone := map[string]bool{}
	for _, r := range rep.Recovered {
		if !o.DryRun {
			for _, f := range r.Deleted {
				gone[f] = true
			}
		}
	}
	rep.Skipped = slices.DeleteFunc(rep.Skipped, func(s Skip) bool { return gone[s.Path] })

	// Before anything is written: what the rewrite does to each index.
	srcs := make([]string, len(tasks))
	for i, tk := range tasks {
		srcs[i] = tk.src
	}
	var rewrites func(string) bool
	if o.Rewrites != nil && o.Rewriter != nil {
		rewrites = askRewrites(srcs, o.Rewrites, o.Jobs)
	}
	notes, err := convert.IndexNotesFor(srcs, rewrites)
	if err != nil {
		return rep, err
	}
	rep.Indexes = notes
	w := o.Words
	if w.What == "" {
		w.What = "the upgrade"
	}
	w.InPlace = true
	for _, n := range notes {
		if o.Notes != nil {
			o.Notes(n.TextWith(w))
		} else {
			say("%s", n.TextWith(w))
		}
	}

	var total int64
	sizes := make([]int64, len(tasks))
	for i, tk := range tasks {
		if fi, err := os.Stat(tk.src); err == nil {
			sizes[i] = fi.Size()
			total += fi.Size()
		}
	}
	var doneBytes atomic.Int64
	var progMu sync.Mutex
	report := func() {
		if o.Progress != nil {
			progMu.Lock()
			o.Progress(doneBytes.Load(), total)
			progMu.Unlock()
		}
	}

	jobs := o.Jobs
	if jobs <= 0 {
		jobs = runtime.NumCPU()
	}
	order := startOrder(tasks, sizes, jobs)
	var (
		mu      sync.Mutex
		stopErr error
		next    int
		wg      sync.WaitGroup
		results = make([]*Rewrite, len(tasks))
	)
	worker := func() {
		defer wg.Done()
		for {
			mu.Lock()
			if stopErr != nil || next >= len(tasks) {
				mu.Unlock()
				return
			}
			i := order[next]
			next++
			mu.Unlock()
			tk := tasks[i]
			var last int64
			prog := func(done, tot int64) {
				if tot <= 0 {
					return
				}
				cur := sizes[i] * done / tot
				doneBytes.Add(cur - last)
				last = cur
				report()
			}
			rw, err := rewriteOne(d, tk, p.To, o, prog)
			doneBytes.Add(sizes[i] - last)
			report()
			mu.Lock()
			switch {
			case err == nil && rw.Unchanged:
				results[i] = rw
				say("%s: %s needs no rewrite", rw.Where(), filepath.Base(rw.Source))
			case err == nil && rw.Output == "":
				results[i] = rw
				say("%s: removed %s: nothing of it was kept (%d -> 0 bytes)", rw.Where(), filepath.Base(rw.Source), rw.Before)
			case err == nil:
				results[i] = rw
				verb := "rewrote"
				if o.DryRun {
					verb = "would rewrite"
				}
				say("%s: %s %s as %s (%s -> %s, %d partitions, %d -> %d bytes%s)", rw.Where(), verb, filepath.Base(rw.Source), filepath.Base(rw.Output),
					rw.From, rw.To, rw.Partitions, rw.Before, rw.After, map[bool]string{true: ", verified"}[rw.Verified])
				for _, m := range rw.Statistics {
					say("  statistics: %s; %s the rows' own", m, past(o.DryRun, "written as", "would be written as"))
				}
			case isLive(err):
				if stopErr == nil {
					stopErr = err
				}
			case errors.As(err, new(*ProblemError)):
				rep.Problems = append(rep.Problems, Skip{tk.src, err.Error()})
				say("%s: %v", tk.src, err)
			default:
				rep.Failed = append(rep.Failed, Skip{tk.src, err.Error()})
				say("%s: %v", tk.src, err)
			}
			mu.Unlock()
		}
	}
	for range min(jobs, max(len(tasks), 1)) {
		wg.Add(1)
		go worker()
	}
	wg.Wait()
	for _, rw := range results {
		if rw != nil {
			rep.Rewritten = append(rep.Rewritten, *rw)
			rep.Before += rw.Before
			rep.After += rw.After
		}
	}
	rep.Saved = rep.Before - rep.After
	if stopErr != nil {
		return rep, stopErr
	}
	return rep, nil
}

// startOrder is the order the rewrites start in: the plan's with one job;
// with more, the most work first (Data.db's bytes, and four times
// Index.db's for the partitions it counts: a rewrite's cost is a share per
// byte and a share per partition, and a table of small partitions costs
// over ten times more a byte), so that the largest rewrite does not start
// last and run alone at the end while the other cores idle. The outputs
// are the same bytes in any order.
func startOrder(tasks []task, dataSizes []int64, jobs int) []int {
	order := make([]int, len(tasks))
	for i := range order {
		order[i] = i
	}
	if jobs <= 1 {
		return order
	}
	work := make([]int64, len(tasks))
	for i, tk := range tasks {
		work[i] = dataSizes[i]
		if fi, err := os.Stat(strings.TrimSuffix(tk.src, format.ComponentData) + format.ComponentIndex); err == nil {
			work[i] += 4 * fi.Size()
		}
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(work[b], work[a]) })
	return order
}

// askRewrites asks ask about each sstable, jobs at a time (0: one per
// core), and returns the answers.
func askRewrites(srcs []string, ask func(string) bool, jobs int) func(string) bool {
	if jobs <= 0 {
		jobs = runtime.NumCPU()
	}
	answers := make([]bool, len(srcs))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(jobs, max(len(srcs), 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < len(srcs); i = int(next.Add(1) - 1) {
				answers[i] = ask(srcs[i])
			}
		}()
	}
	wg.Wait()
	yes := map[string]bool{}
	for i, src := range srcs {
		yes[src] = answers[i]
	}
	return func(src string) bool { return yes[src] }
}

func past(dry bool, did, would string) string {
	if dry {
		return would
	}
	return did
}

// ProblemError is a rewrite that failed verification: it was rolled
// back and the old sstable left as it was.
type ProblemError struct{ Err error }

func (e *ProblemError) Error() string { return e.Err.Error() }
func (e *ProblemError) Unwrap() error { return e.Err }

func isLive(err error) bool {
	var le *livecheck.Error
	return errors.As(err, &le)
}

// nextID allocates the id of a new sstable in t's directory: a time-UUID
// where the directory uses them, else the next free generation; never one
// any file there already has.
func (t *Table) nextID(to format.Version) format.Descriptor {
	t.mu.Lock()
	defer t.mu.Unlock()
	for {
		var gen string
		if t.UUIDIDs {
			u := txnlog.NewTimeUUID()
			gen = format.UUIDGeneration(u.Tick(), u.LSB)
		} else {
			gen = fmt.Sprint(t.nextGen)
			t.nextGen++
		}
		d := format.Descriptor{Dir: t.Dir, Version: to, Generation: gen}
		if names, _, err := sstableFiles(t.Dir, d.Prefix()); err == nil && len(names) == 0 {
			return d
		}
	}
}

// rewriteOne replaces one sstable (or, dry, estimates it).
func rewriteOne(d *disk, tk task, to format.Version, o Options, prog func(done, total int64)) (*Rewrite, error) {
	old, _, err := format.ParseDescriptor(tk.src)
	if err != nil {
		return nil, err
	}
	co := convert.Options{To: to, Verify: o.Verify, Access: o.Access, Progress: prog}
	rw := &Rewrite{Source: tk.src, Keyspace: tk.t.Keyspace, Table: tk.t.Table,
		From: old.Version.Name, To: to.Name, KeptSource: o.KeepSource}
	fill := func(res *convert.Result) {
		rw.Partitions = res.Partitions
		rw.Components = res.Components
		rw.Verified = res.Verified
		rw.Statistics = res.StatisticsRecollected
		for _, c := range res.Components {
			rw.Before += c.Before
			rw.After += c.After
		}
	}
	if o.DryRun {
		if o.Rewriter != nil {
			return nil, errors.New("upgrade: a dry run estimates conversions only")
		}
		rw.Output = tk.t.nextID(to).Path(format.ComponentData)
		res, err := convert.Estimate(tk.src, co)
		if err != nil {
			return nil, err
		}
		if len(res.Refusals) > 0 {
			return nil, fmt.Errorf("would not be rewritten: %s", strings.Join(res.Refusals, "; "))
		}
		fill(res)
		return rw, nil
	}

	srcInfo, err := os.Stat(tk.src)
	if err != nil {
		return nil, err
	}
	dirInfo, err := os.Stat(tk.t.Dir)
	if err != nil {
		return nil, err
	}
	logOwn := vfs.OwnerOf(dirInfo)
	logOwn.Mode = 0o644
	op := o.Op
	if op == "" {
		op = txnlog.OpUpgrade
	}
	lv := to
	if lv.Name == "" {
		lv = old.Version // a Rewriter that keeps each sstable's version
	}
	x := &txn{d: d, t: tk.t, logOwn: logOwn,
		log: filepath.Join(tk.t.Dir, txnlog.Name(logVersion(lv), op, txnlog.NewTimeUUID()))}
	if tk.w != nil {
		tk.w.own(filepath.Base(x.log))
	}
	x.out = &output{d: d, dir: tk.t.Dir, own: vfs.OwnerOf(srcInfo)}
	fail := func(err error) (*Rewrite, error) {
		if rerr := x.rollback(); rerr != nil {
			err = fmt.Errorf("%w (and rolling back: %v; the transaction log %s is left for the next run or Cassandra's startup)", err, rerr, x.log)
		}
		return rw, err
	}
	outs := &txnOutputs{x: x, w: tk.w}
	rewrite := o.Rewriter
	if rewrite == nil {
		rewrite = func(src string, out Outputs, prog func(done, total int64)) (Rewritten, error) {
			desc, files, err := out.New(to)
			if err != nil {
				return Rewritten{}, err
			}
			res, err := convert.ConvertTo(src, desc, files, co)
			if res != nil {
				fill(res)
			}
			if err != nil && res != nil && len(res.Problems) > 0 {
				err = &ProblemError{err}
			}
			return Rewritten{Partitions: rw.Partitions, Verified: rw.Verified, Components: rw.Components}, err
		}
	}
	res, err := rewrite(tk.src, outs, prog)
	if o.Rewriter != nil {
		rw.Partitions, rw.Verified, rw.Components = res.Partitions, res.Verified, res.Components
		rw.To, rw.Before, rw.After = res.To, res.Before, res.After
		if res.Problem && err != nil {
			err = &ProblemError{err}
		}
	}
	if len(x.added) > 0 {
		rw.Output = x.added[0].Path(format.ComponentData)
		for _, a := range x.added[1:] {
			rw.Outputs = append(rw.Outputs, a.Path(format.ComponentData))
		}
	}
	if err != nil {
		return fail(err)
	}
	if res.Unchanged && len(x.added) == 0 {
		rw.Unchanged = true
		return rw, nil
	}
	if err := d.syncDir(tk.t.Dir); err != nil {
		return fail(err)
	}
	if tk.w != nil {
		if err := tk.w.check(false); err != nil {
			return fail(err)
		}
		if err := unchanged(tk.w, old); err != nil {
			return fail(err)
		}
		tk.w.own(old.Prefix())
	}
	if _, err := x.commit(old, o.KeepSource); err != nil {
		return nil, fmt.Errorf("%s: %w (the transaction log %s says how to finish: run again)", tk.src, err, x.log)
	}
	return rw, nil
}

// logVersion is the version part of a transaction log's name
// (LogFile.getFileName): the version for big format, "<format>-<version>"
// for the others.
func logVersion(v format.Version) string {
	if v.IsBTI() {
		return string(v.Format) + "-" + v.Name
	}
	return v.Name
}

// txnOutputs gives a Rewriter its new sstables: each one's id is the next
// free one, its ADD record logged before New returns.
type txnOutputs struct {
	x *txn
	w *watch
}

func (o *txnOutputs) New(v format.Version) (format.Descriptor, convert.Output, error) {
	desc := o.x.t.nextID(v)
	if o.w != nil {
		o.w.own(desc.Prefix())
	}
	if err := o.x.add(desc); err != nil {
		return desc, nil, err
	}
	return desc, o.x.out, nil
}

func (o *txnOutputs) Dir() string { return o.x.t.Dir }

func (o *txnOutputs) Link(oldname, newname string) error { return o.x.d.fs.Link(oldname, newname) }

func (o *txnOutputs) MkdirAll(dir string) error { return o.x.d.fs.MkdirAll(dir, 0o755) }

func (o *txnOutputs) SyncDir(dir string) error { return o.x.d.syncDir(dir) }

// unchanged checks the old sstable's files are as they were at the start.
func unchanged(w *watch, old format.Descriptor) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	for name, st := range w.files {
		if !strings.HasPrefix(name, old.Prefix()) {
			continue
		}
		fi, err := os.Stat(filepath.Join(w.dir, name))
		if err != nil {
			return &livecheck.Error{Why: fmt.Sprintf("%s disappeared during the upgrade", filepath.Join(w.dir, name))}
		}
		if fi.Size() != st.size || !fi.ModTime().Equal(st.mtime) {
			return &livecheck.Error{Why: fmt.Sprintf("%s was modified during the upgrade", filepath.Join(w.dir, name))}
		}
	}
	return nil
}
