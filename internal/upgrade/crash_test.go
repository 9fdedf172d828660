package upgrade

import (
	"bufio"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sstabletool/sstabletool/internal/format/txnlog"
	"github.com/sstabletool/sstabletool/internal/vfs"
	"github.com/sstabletool/sstabletool/internal/vfs/errorfs"
)

var crashTrials = flag.Int("crash.trials", 0, "crash trials per kind in the upgrade crash tests (0: a few seconds' worth; more for a long run)")

// crashed is a data directory a killed upgrade left, to be checked both
// ways the invariant promises: after Cassandra's startup cleanup, and after
// the next run of the tool.
func checkAfterCrash(t *testing.T, n *node, trial string) (recovered []Recovery) {
	t.Helper()
	saved := n.data + ".saved"
	if out, err := exec.Command("cp", "-al", n.data, saved).CombinedOutput(); err != nil {
		t.Fatalf("%s: cp -al: %v %s", trial, err, out)
	}
	// 1. Cassandra's startup: every log verifies (never "Cannot remove
	// temporary or obsoleted files"), its leftovers go, and each original
	// sstable is live exactly once.
	for _, dir := range n.tables() {
		if _, err := txnlog.RemoveUnfinishedLeftovers(vfs.Default, dir); err != nil {
			t.Fatalf("%s: Cassandra would refuse to start: %v", trial, err)
		}
		if err := n.checkOneCopy(t, dir, oa, false); err != nil {
			t.Fatalf("%s: after Cassandra's startup cleanup: %v", trial, err)
		}
	}
	// 2. The next run, on the state the crash left: it says what it
	// found, finishes or rolls back, and completes the upgrade.
	if err := os.RemoveAll(n.data); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(saved, n.data); err != nil {
		t.Fatal(err)
	}
	p, err := NewPlan([]string{n.data}, oa)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Run(p, Options{Jobs: 2})
	if err != nil {
		t.Fatalf("%s: rerun: %v", trial, err)
	}
	if len(rep.Failed) != 0 || len(rep.Problems) != 0 {
		t.Fatalf("%s: rerun failed: %+v %+v", trial, rep.Failed, rep.Problems)
	}
	for _, r := range rep.Recovered {
		if r.Action != "finished" && r.Action != "rolled back" {
			t.Fatalf("%s: rerun found %s: %s %s", trial, r.Log, r.Action, r.Problem)
		}
	}
	for _, dir := range n.tables() {
		if err := n.checkOneCopy(t, dir, oa, true); err != nil {
			t.Fatalf("%s: after the rerun: %v", trial, err)
		}
		if logs, _ := txnlog.FindLogs(dir); len(logs) != 0 {
			t.Fatalf("%s: after the rerun, %s is left", trial, logs[0].Name)
		}
	}
	return rep.Recovered
}

// opsOfFullRun counts the changes a full upgrade of a fresh node makes,
// by kind, and the bytes it writes.
func opsOfFullRun(t *testing.T) (ops []string, bytes int64) {
	n := newSmallNode(t)
	efs := errorfs.New(vfs.Default).Trace(func(op errorfs.Op) {
		if errorfs.Changes(op) {
			ops = append(ops, op.Kind.String()+" "+filepath.Base(op.Path))
		}
	})
	p, _ := NewPlan([]string{n.data}, oa)
	rep, err := RunOn(efs, p, Options{Jobs: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, rw := range rep.Rewritten {
		bytes += rw.After
	}
	return ops, bytes
}

// TestCrashAtEveryStep kills the upgrade (in process, through the FS seam,
// as a kill would: nothing after the point reaches the disk) at changes of
// the data directory: in
// the default run, at every change of the first sstable's transaction
// (each file created, chmod, fsync, log record appended, file unlinked,
// directory fsynced) and at a sample of the rest; with -crash.trials, at
// that many more; and at random byte counts, which tear component files
// and log lines mid-write. After each, both ways out must end with every
// original sstable live exactly once (checkAfterCrash).
func TestCrashAtEveryStep(t *testing.T) {
	ops, total := opsOfFullRun(t)
	firstTxn := 0
	for i, op := range ops {
		if strings.HasPrefix(op, "remove ") && strings.HasSuffix(op, ".log") {
			firstTxn = i + 1
			break
		}
	}
	kinds := map[string]int{}
	for _, op := range ops {
		kinds[strings.Fields(op)[0]]++
	}
	t.Logf("a full run makes %d changes (%v) and writes %d bytes; the first sstable's transaction is %d of them", len(ops), kinds, total, firstTxn)
	points := []int{}
	for i := 0; i <= firstTxn; i++ {
		points = append(points, i)
	}
	rng := rand.New(rand.NewPCG(11, 12))
	extra := 12
	if *crashTrials > 0 {
		extra = *crashTrials
	}
	for range extra {
		points = append(points, firstTxn+rng.IntN(len(ops)-firstTxn+1))
	}
	finished, rolledBack := 0, 0
	for _, k := range points {
		n := newSmallNode(t)
		efs := errorfs.New(vfs.Default).CrashAt(int64(k), errorfs.Changes)
		p, _ := NewPlan([]string{n.data}, oa)
		_, err := RunOn(efs, p, Options{Jobs: 1})
		what := "the end"
		if k < len(ops) {
			what = ops[k]
		}
		trial := fmt.Sprintf("crash before change %d (%s)", k, what)
		if k < len(ops) != efs.Crashed() {
			t.Fatalf("%s: crashed %v; run returned %v", trial, efs.Crashed(), err)
		}
		for _, r := range checkAfterCrash(t, n, trial) {
			if r.Action == "finished" {
				finished++
			} else {
				rolledBack++
			}
		}
	}
	bytePoints := 8
	if *crashTrials > 0 {
		bytePoints = *crashTrials
	}
	for range bytePoints {
		n := newSmallNode(t)
		at := rng.Int64N(total)
		efs := errorfs.New(vfs.Default).CrashAfterBytes(at)
		p, _ := NewPlan([]string{n.data}, oa)
		_, err := RunOn(efs, p, Options{Jobs: 2})
		if !efs.Crashed() {
			t.Fatalf("crash after %d bytes: run returned %v without crashing", at, err)
		}
		for _, r := range checkAfterCrash(t, n, fmt.Sprintf("crash after %d of %d bytes", at, total)) {
			if r.Action == "finished" {
				finished++
			} else {
				rolledBack++
			}
		}
	}
	if finished == 0 || rolledBack == 0 {
		t.Fatalf("the reruns finished %d and rolled back %d interrupted transactions; both must happen", finished, rolledBack)
	}
	t.Logf("%d crash points; the reruns finished %d committed transactions and rolled back %d", len(points)+bytePoints, finished, rolledBack)
}

// TestHelperUpgradeProcess is the child of TestKilledUpgrade: it upgrades
// the data directory it is given until it is killed.
func TestHelperUpgradeProcess(t *testing.T) {
	dir := os.Getenv("UPGRADE_HELPER_DATA")
	if dir == "" {
		t.Skip("helper process only")
	}
	p, err := NewPlan([]string{dir}, oa)
	if err != nil {
		t.Fatal(err)
	}
	os.Stdout.WriteString("started\n")
	if _, err := Run(p, Options{Verify: true, Jobs: 2}); err != nil {
		t.Fatal(err)
	}
	os.Stdout.WriteString("done\n")
}

// TestKilledUpgrade kills a real upgrade process with SIGKILL at random
// instants, then checks both ways out (checkAfterCrash).
func TestKilledUpgrade(t *testing.T) {
	trials := 4
	if *crashTrials > 0 {
		trials = *crashTrials
	}
	// How long a whole run takes in a child bounds the kill instants.
	full := runChild(t, newSmallNode(t), -1)
	rng := rand.New(rand.NewPCG(3, 4))
	killedMidway := 0
	for i := range trials {
		n := newSmallNode(t)
		after := time.Duration(rng.Int64N(int64(full)))
		if !runChildKilled(t, n, after) {
			killedMidway++
		}
		checkAfterCrash(t, n, fmt.Sprintf("kill -9 after %v (a whole run takes %v), trial %d", after, full, i))
	}
	t.Logf("%d kills, %d before the run ended; a whole run took %v", trials, killedMidway, full)
}

// runChild runs the child to its end and returns how long the upgrade
// took from the moment it said it started.
func runChild(t *testing.T, n *node, _ time.Duration) time.Duration {
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperUpgradeProcess$")
	cmd.Env = append(os.Environ(), "UPGRADE_HELPER_DATA="+n.data)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(out)
	if line, err := r.ReadString('\n'); err != nil || line != "started\n" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("child: %q %v", line, err)
	}
	start := time.Now()
	rest, _ := r.ReadString(0)
	if err := cmd.Wait(); err != nil || !strings.Contains(rest, "done") {
		t.Fatalf("child: %v\n%s", err, rest)
	}
	return time.Since(start)
}

// runChildKilled starts the child and kills it after the delay (counted
// from when it says it started); it reports whether the run had ended.
func runChildKilled(t *testing.T, n *node, after time.Duration) bool {
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperUpgradeProcess$")
	cmd.Env = append(os.Environ(), "UPGRADE_HELPER_DATA="+n.data)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(out)
	if line, err := r.ReadString('\n'); err != nil || line != "started\n" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("child: %q %v", line, err)
	}
	time.Sleep(after)
	cmd.Process.Kill()
	rest, _ := r.ReadString(0)
	cmd.Wait()
	return strings.Contains(rest, "done")
}
