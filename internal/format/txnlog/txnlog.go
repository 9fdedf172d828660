// Package txnlog reads and writes Cassandra's sstable transaction logs, the
// "<version>_txn_<operation>_<time-uuid>.log" files a table directory holds
// while a flush, compaction or upgrade replaces sstables
// (db/lifecycle/LogFile.java, LogRecord.java, LogReplicaSet.java), and
// decides what Cassandra's startup cleanup
// (LogTransaction.removeUnfinishedLeftovers) does with one.
//
// A log is a list of lines, each one record:
//
//	ADD:[<dir>/<prefix>,0,<files>][<checksum>]           an sstable the transaction writes
//	REMOVE:[<dir>/<prefix>,<mtime ms>,<files>][<checksum>] an sstable it replaces
//	COMMIT:[,0,0][<checksum>]                             the transaction is decided
//
// where <prefix> is the sstable's file name up to its component, ending in
// "-" ("nb-3-big-"), <mtime ms> the newest modification time of the
// replaced sstable's files in milliseconds and the checksum the CRC32 of
// the path's UTF-8 bytes, the type's name and three big-endian ints: the
// time's low and high halves and the file count. On startup Cassandra
// verifies every log (Verify) and then, if its last record is a valid
// COMMIT, deletes the files of its REMOVE records, else those of its ADD
// records, oldest first, and finally the log (Cleanup).
package txnlog

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"regexp"
	"strconv"
	"strings"
)

// Type is a record's kind (LogRecord.Type).
type Type int

const (
	Unknown Type = iota // a line that does not parse
	Add                 // an sstable to keep if the transaction commits
	Remove              // an sstable to keep if it does not
	Commit
	Abort
)

// String is the name Cassandra writes and checksums (the enum's name).
func (t Type) String() string {
	switch t {
	case Add:
		return "ADD"
	case Remove:
		return "REMOVE"
	case Commit:
		return "COMMIT"
	case Abort:
		return "ABORT"
	}
	return "UNKNOWN"
}

func (t Type) hasFile() bool { return t == Add || t == Remove }

// Final is true for COMMIT and ABORT, which end a log.
func (t Type) Final() bool { return t == Commit || t == Abort }

// Record is one line of a log.
type Record struct {
	Type Type
	// Path is the sstable's absolute path up to its component, ending in
	// "-" as Cassandra writes it; "" for COMMIT and ABORT.
	Path string
	// UpdateTime is, for REMOVE, the newest modification time in
	// milliseconds of the sstable's files when the record was written;
	// Cassandra stores 0 for every other type (LogFile.commit passes
	// currentTimeMillis, but LogRecord's constructor keeps a time for
	// REMOVE only, so COMMIT is written as "COMMIT:[,0,0]").
	UpdateTime int64
	// NumFiles is the sstable's file count (0 for COMMIT and ABORT).
	NumFiles int
	// Checksum is the stored checksum.
	Checksum int64
	// Raw is the line as read or written, without its line end.
	Raw string
	// Err says why Cassandra takes this record for invalid; "" when valid.
	Err string
}

// NewRecord builds a record as LogRecord's constructor does: the update
// time is kept only for REMOVE, the path and file count only for ADD and
// REMOVE; the checksum and the line are computed.
func NewRecord(t Type, path string, updateTime int64, numFiles int) Record {
	r := Record{Type: t}
	if t == Remove {
		r.UpdateTime = updateTime
	}
	if t.hasFile() {
		r.Path, r.NumFiles = path, numFiles
	}
	r.Checksum = r.ComputeChecksum()
	r.Raw = fmt.Sprintf("%s:[%s,%d,%d][%d]", r.Type, r.Path, r.UpdateTime, r.NumFiles, r.Checksum)
	return r
}

// ComputeChecksum is LogRecord.computeChecksum: CRC32 over the path's
// UTF-8 bytes, the type's name, the update time's low then high 32 bits
// and the file count, each int big-endian.
func (r Record) ComputeChecksum() int64 {
	h := crc32.NewIEEE()
	h.Write([]byte(r.Path))
	h.Write([]byte(r.Type.String()))
	var b [12]byte
	binary.BigEndian.PutUint32(b[0:], uint32(r.UpdateTime))
	binary.BigEndian.PutUint32(b[4:], uint32(uint64(r.UpdateTime)>>32))
	binary.BigEndian.PutUint32(b[8:], uint32(int32(r.NumFiles)))
	h.Write(b[:])
	return int64(h.Sum32())
}

// Valid is LogRecord.isValid: parsed, of a known type, no error.
func (r Record) Valid() bool { return r.Err == "" && r.Type != Unknown }

// FileName is the name of the sstable files' prefix ("nb-3-big-"), the
// last element of Path.
func (r Record) FileName() string {
	if i := strings.LastIndexByte(r.Path, '/'); i >= 0 {
		return r.Path[i+1:]
	}
	return r.Path
}

// key is what LogRecord.equals compares: type, path, file count and time
// (not the checksum), so two lines differing only there are duplicates.
type key struct {
	t    Type
	path string
	n    int
	time int64
}

func (r Record) key() key { return key{r.Type, r.Path, r.NumFiles, r.UpdateTime} }

// recordLine is LogRecord.REGEX, matched against the whole line.
var recordLine = regexp.MustCompile(`(?i)` + RecordPattern)

// RecordPattern is LogRecord.REGEX as Java spells it (Java compiles it
// case-insensitive); tests compare it with the source.
const RecordPattern = `^(add|remove|commit|abort):\[([^,]*),?([^,]*),?([^,]*)\]\[(\d*)\]$`

// ParseRecord parses one line as LogRecord.make(String) does. A line that
// does not match, or whose numbers do not parse as Java's Long.parseLong
// and Integer.parseInt would, is an Unknown record with Err set; the
// checksum is not checked here (Verify does).
func ParseRecord(line string) Record {
	m := recordLine.FindStringSubmatch(line)
	if m == nil {
		return Record{Type: Unknown, Raw: line, Err: fmt.Sprintf("Failed to parse [%s]", line)}
	}
	var t Type
	switch strings.ToUpper(m[1]) {
	case "ADD":
		t = Add
	case "REMOVE":
		t = Remove
	case "COMMIT":
		t = Commit
	default:
		t = Abort
	}
	ut, err1 := strconv.ParseInt(m[3], 10, 64)
	nf, err2 := strconv.ParseInt(m[4], 10, 32)
	cs, err3 := strconv.ParseInt(m[5], 10, 64)
	for _, err := range []error{err1, err2, err3} {
		if err != nil {
			return Record{Type: Unknown, Raw: line, Err: fmt.Sprintf("Failed to parse line: %v", err)}
		}
	}
	r := Record{Type: t, Checksum: cs, Raw: line}
	// The constructor keeps what the type has: a path and count for file
	// records, the time for REMOVE only.
	if t.hasFile() {
		r.Path, r.NumFiles = m[2], int(nf)
	}
	if t == Remove {
		r.UpdateTime = ut
	}
	return r
}

// Lines splits a log's bytes into lines as Java's Files.readAllLines does:
// "\n", "\r" and "\r\n" end a line, and a last line needs no end.
func Lines(b []byte) []string {
	var out []string
	s := string(b)
	for len(s) > 0 {
		i := strings.IndexAny(s, "\r\n")
		if i < 0 {
			out = append(out, s)
			break
		}
		out = append(out, s[:i])
		if s[i] == '\r' && i+1 < len(s) && s[i+1] == '\n' {
			i++
		}
		s = s[i+1:]
	}
	return out
}

// fileName is LogFile.FILE_REGEX.
var fileName = regexp.MustCompile(FilePattern)

// FilePattern is LogFile.FILE_REGEX as Java spells it; tests compare it
// with the source.
const FilePattern = `^((?:[a-z]+-)?.{2}_)?txn_(.*)_(.*)\.log$`

// IsLogName reports whether a file name is a transaction log's
// (LogFile.isLogFile).
func IsLogName(name string) bool { return fileName.MatchString(name) }

// ParseName splits a log's file name into its version part ("oa", "" in
// early 3.0 logs), operation ("compaction", "upgradesstables") and id.
func ParseName(name string) (version, op, id string, ok bool) {
	m := fileName.FindStringSubmatch(name)
	if m == nil {
		return "", "", "", false
	}
	return strings.TrimSuffix(m[1], "_"), m[2], m[3], true
}

// Name is the file name LogFile gives a big-format transaction's log:
// "<version>_txn_<operation>_<id>.log".
func Name(version, op string, id UUID) string {
	return version + "_txn_" + op + "_" + id.String() + ".log"
}

// Operation file names (OperationType.fileName: the type's description in
// lower case without spaces).
const (
	OpUpgrade    = "upgradesstables"       // "Upgrade sstables"
	OpScrub      = "scrub"                 // "Scrub"
	OpUnknown    = "unknowncompactiontype" // "Unknown compaction type": sstablesplit's (LifecycleTransaction.offline(UNKNOWN))
	OpCleanup    = "cleanup"               // "Cleanup"
	OpCompaction = "compaction"
	OpFlush      = "flush"
)
