#!/bin/sh
# Builds the oracle TestPageAwareAgainstOracle runs: Cassandra's own trie
# writer classes, taken from a Cassandra 5.0 source checkout (a git
# directory, $1) at build time, compiled with the small stand-ins here
# (minimal interfaces the writer calls; none of them is Cassandra code) and
# the harness Oracle.java. Usage:
#   sh build.sh /path/to/cassandra.git /tmp/oracle-classes
#   SSTABLETOOL_TRIE_ORACLE=/tmp/oracle-classes go test ./format/bti/trie -run Oracle -v
set -eu
repo=$1; out=$2; here=$(cd "$(dirname "$0")" && pwd)
src=$(mktemp -d)
cp -r "$here"/Oracle.java "$here"/javax "$here"/org "$src"/
for f in io/tries/TrieNode io/tries/SerializationNode io/tries/TrieSerializer io/tries/IncrementalTrieWriter \
         io/tries/IncrementalTrieWriterBase io/tries/IncrementalTrieWriterPageAware \
         io/tries/IncrementalDeepTrieWriterPageAware io/util/SizedInts; do
  mkdir -p "$src/org/apache/cassandra/$(dirname $f)"
  git -C "$repo" show "HEAD:src/java/org/apache/cassandra/$f.java" > "$src/org/apache/cassandra/$f.java"
done
mkdir -p "$out"
javac -d "$out" $(find "$src" -name '*.java')
rm -rf "$src"
