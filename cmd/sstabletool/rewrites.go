package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/sstabletool/sstabletool/convert"
)

// rewrites is what the commands that write sstables share (convert,
// convert --merge, scrub --out): one rewrite per sstable or table, each
// behind its progress bar; the results kept in order for --json; and the
// exit: 2 when one could not be rewritten, else 1 when one found problems
// (its verification failed and its output was discarded; for scrub,
// something was repaired or lost), else 0.
type rewrites struct {
	json     bool
	results  []any // each rewrite's result and, for sstables, each failure (sstableError)
	problems int   // rewrites that found problems
}

// withProgress runs one rewrite behind a progress bar labelled label, which the
// rewrite's progress callback moves (done and total bytes read).
func withProgress[R any](label string, rewrite func(progress func(done, total int64)) (R, error)) (R, error) {
	prog := newProgress(label, 0)
	res, err := rewrite(func(done, total int64) { prog.total = total; prog.update(done) })
	prog.done()
	return res, err
}

// failed keeps a failure for --json (scan.each's onFail).
func (r *rewrites) failed(e sstableError) { r.results = append(r.results, e) }

// converted takes a convert result: the leftovers its run repaired first
// are printed; one whose verification failed (written, re-read and found
// different: the output is discarded) is kept, counted and said on
// stderr; an error with no such result fails the sstable or table. It
// reports whether the result is a success to describe on stdout.
func (r *rewrites) converted(res *convert.Result, err error) (bool, error) {
	if res != nil && !r.json {
		for _, n := range res.Recovered {
			fmt.Fprintf(stdout, "recovered: %s\n", n)
		}
		for _, n := range res.DroppedIndexFiles {
			fmt.Fprintf(stdout, "removed %s: an index file left under the output's name without its Data.db (--drop-index-components)\n", n)
		}
	}
	if err != nil && res != nil && len(res.Problems) > 0 {
		r.problems++
		fmt.Fprintln(stderr, "sstabletool:", err)
		r.results = append(r.results, res)
		return false, nil
	}
	if err != nil {
		return false, err
	}
	r.results = append(r.results, res)
	return !r.json, nil
}

// end writes the results for --json and returns the command's exit:
// failed (the failures' exit, from scan.err or mergeEach) first, then 1
// with problemsMsg when a rewrite found problems.
func (r *rewrites) end(failed error, problemsMsg string) error {
	if r.json {
		if err := writeJSON(r.results); err != nil && failed == nil {
			failed = err
		}
	}
	if failed != nil {
		return failed
	}
	if r.problems > 0 {
		return cli.Exit(problemsMsg, exitProblem)
	}
	return nil
}
