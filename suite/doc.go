// Package suite is `dmg bench suite`: a benchmark matrix of `dmg run`
// child jobs (graphs × algorithms × role layouts × repetitions ×
// variants), each started as its own process under a launcher or with
// --local and writing a --json report. The reports become rows
// (results.csv, results.json), the rows a summary of medians per cell
// with ratios against a baseline variant (summary.txt, summary.json), and
// the summary PNG plots.
//
// Package launch wires it to the command line: the flags, refusing --roles
// and a launcher, and the exit status (2 for a matrix that Validate refuses,
// 1 when Run fails).
package suite
