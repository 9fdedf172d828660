// Package realworld holds only tests: every sstable under
// ../shared/testdata/realworld (files from real writers that differ from
// the textbook layout) goes through each read command's code path, a
// conversion to oa and the verifier, and the verifier must name exactly
// the problems each file really has.
package realworld
