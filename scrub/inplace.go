package scrub

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/sstabletool/sstabletool/convert"
	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/internal/format/txnlog"
	"github.com/sstabletool/sstabletool/internal/upgrade"
	"github.com/sstabletool/sstabletool/internal/vfs"
	"github.com/sstabletool/sstabletool/internal/writer"
)

// InPlaceOptions controls a scrub of a stopped node's data directories.
type InPlaceOptions struct {
	Options
	// Force skips the checks that the node is stopped (no process holds a
	// file open there, the commit log is not newer than the sstables, no
	// file changes during the run).
	Force bool
	// Jobs is how many sstables are scrubbed at once (0: one per core).
	Jobs int
	// CommitLogs are the node's commit log directories (nil: commitlog/
	// beside each data directory).
	CommitLogs []string
	// Log, when set, hears one line per step.
	Log func(line string)
}

// NodeReport is what a scrub in place did.
type NodeReport struct {
	// Snapshot names the snapshot (snapshots/<Snapshot>/ in each table
	// directory) that holds every sstable scrub replaced, as it was: the
	// pre-scrub snapshot StandaloneScrubber takes. Empty when nothing was
	// replaced.
	Snapshot string    `json:"snapshot,omitempty"`
	SSTables []*Report `json:"sstables"`
	// Recovered are the transaction logs of killed runs that were
	// finished or rolled back first.
	Recovered []string `json:"recovered"`
	// Skipped are paths left as they are (snapshots, backups, leftovers of
	// unfinished transactions), Failed the sstables that could not be
	// scrubbed (each was left as it was).
	Skipped []Failure `json:"skipped"`
	Failed  []Failure `json:"failed"`
	// Indexes say what the scrub does to each index of the tables it
	// rewrites (upgrade.Report.Indexes).
	Indexes []convert.IndexNote `json:"indexes,omitempty"`
}

// Failure is an sstable or path and why it was not scrubbed.
type Failure struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// Repaired reports whether any sstable was repaired or lost data.
func (n *NodeReport) Repaired() bool {
	for _, r := range n.SSTables {
		if r.Repaired() {
			return true
		}
	}
	return false
}

// InPlace scrubs every live sstable under dirs (data, keyspace or table
// directories; snapshots/ and backups/ are left alone) in its own
// directory, on a stopped node: each sstable that needs repair is replaced
// by the scrubbed one (or two) under the next free id through Cassandra's
// transaction log (<version>_txn_scrub_<uuid>.log), exactly as
// sstabletool upgrade replaces sstables, so that after a crash at any
// point either the next run or Cassandra's own startup ends with one copy.
// Before it is replaced, an sstable is hard-linked into
// snapshots/pre-scrub-<ms>/, as sstablescrub snapshots the table first. An
// sstable that needs nothing is left as it is. In Validate mode nothing
// is written, and nothing is checked about the node.
func InPlace(dirs []string, o InPlaceOptions) (*NodeReport, error) {
	return inPlaceOn(vfs.Default, dirs, o)
}

func inPlaceOn(fsys vfs.FS, dirs []string, o InPlaceOptions) (*NodeReport, error) {
	plan, err := upgrade.NewPlanAll(dirs, o.To)
	if err != nil {
		return nil, err
	}
	rep := &NodeReport{SSTables: []*Report{}, Recovered: []string{}, Skipped: []Failure{}, Failed: []Failure{}}
	for _, s := range plan.Skipped {
		rep.Skipped = append(rep.Skipped, Failure{s.Path, s.Reason})
	}
	for _, f := range plan.Failed {
		rep.Failed = append(rep.Failed, Failure{f.Path, f.Reason})
	}
	if o.Mode == Validate {
		for _, t := range plan.Tables {
			for _, src := range t.Upgrade {
				r, err := Scrub(src, "", o.Options)
				if err != nil {
					rep.Failed = append(rep.Failed, Failure{src, err.Error()})
					continue
				}
				rep.SSTables = append(rep.SSTables, r)
			}
		}
		return rep, nil
	}
	snapshot := fmt.Sprintf("pre-scrub-%d", time.Now().UnixMilli())
	var mu sync.Mutex
	reports := map[string]*Report{}
	snapped := false
	rewriter := func(src string, out upgrade.Outputs, prog func(done, total int64)) (upgrade.Rewritten, error) {
		so := o.Options
		so.Progress = prog
		sc, err := open(src, so)
		if err != nil {
			return upgrade.Rewritten{}, err
		}
		defer sc.close()
		defer func() {
			mu.Lock()
			reports[src] = sc.rep
			mu.Unlock()
		}()
		rebuild, err := sc.decide()
		if err != nil {
			return upgrade.Rewritten{}, err
		}
		if rebuild && sc.to.Name == sc.from.Name {
			p := sc.plan()
			if p.index == "" && p.summary == "" && p.filter == "" && p.digest == "" && p.crc == "" && p.toc == "" {
				sc.rebuild(nil) // the report: every component kept
				sc.rep.Unchanged = true
				return upgrade.Rewritten{Unchanged: true, Partitions: sc.rep.PartitionsKept, Verified: true}, nil
			}
		}
		if err := upgrade.Snapshot(out, src, snapshot); err != nil {
			return upgrade.Rewritten{}, err
		}
		mu.Lock()
		snapped = true
		mu.Unlock()
		outs := &inPlaceOutputs{out: out}
		if rebuild {
			err = sc.rebuild(outs)
		} else {
			err = sc.rewrite(outs)
		}
		if err == nil && len(outs.made) > 0 {
			err = sc.verifyOutputs(outs.made, out.Dir())
		}
		res := upgrade.Rewritten{Partitions: sc.rep.PartitionsKept, Verified: sc.rep.Verified, Problem: errors.Is(err, ErrAborted),
			To: sc.to.Name, Before: sizeOf(sc.src.Desc())}
		for _, d := range outs.made {
			sc.rep.Outputs = append(sc.rep.Outputs, d.Path(format.ComponentData))
			res.After += sizeOf(d)
		}
		if err != nil {
			sc.rep.Outputs = sc.rep.Outputs[:0]
		}
		return res, err
	}
	uo := upgrade.Options{Force: o.Force, Jobs: o.Jobs, Access: o.Access, CommitLogs: o.CommitLogs, Progress: o.Progress,
		Log: o.Log, Op: txnlog.OpScrub, Rewriter: rewriter, Words: convert.NoteWords{What: "the scrub"}}
	urep, err := upgrade.RunOn(fsys, plan, uo)
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
	for _, t := range plan.Tables {
		for _, src := range t.Upgrade {
			if r := reports[src]; r != nil {
				rep.SSTables = append(rep.SSTables, r)
			}
		}
	}
	if snapped {
		rep.Snapshot = snapshot
	}
	return rep, err
}

// inPlaceOutputs creates the scrubbed sstables through the transaction.
type inPlaceOutputs struct {
	out  upgrade.Outputs
	made []format.Descriptor
}

func (o *inPlaceOutputs) newSSTable(v format.Version, _ bool) (format.Descriptor, writer.Output, error) {
	d, files, err := o.out.New(v)
	if err != nil {
		return d, nil, err
	}
	o.made = append(o.made, d)
	return d, files, nil
}

// sizeOf is the bytes of an sstable's files.
func sizeOf(d format.Descriptor) int64 {
	ents, err := os.ReadDir(d.Dir)
	if err != nil {
		return 0
	}
	var n int64
	for _, e := range ents {
		if fi, err := e.Info(); err == nil && !e.IsDir() && strings.HasPrefix(e.Name(), d.Prefix()) {
			n += fi.Size()
		}
	}
	return n
}
