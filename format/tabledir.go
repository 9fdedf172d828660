package format

import "regexp"

// tableDirName is the name Cassandra (2.1 and later) gives a table's data
// directory, <table>-<the table id's 32 hex digits> (Directories.java:
// the table name, "-", TableId.toHexString()).
var tableDirName = regexp.MustCompile(`^(\w+)-[0-9a-f]{32}$`)

// TableOfDir is the table a table directory's name names: "users" for
// "users-5bc52802de2535edaeab188eecebb090". ok is false for any other name
// (a table directory of Cassandra before 2.1 is named as the table alone).
func TableOfDir(name string) (table string, ok bool) {
	m := tableDirName.FindStringSubmatch(name)
	if m == nil {
		return "", false
	}
	return m[1], true
}
