// Package hugemem hands out large zeroed arrays from anonymous mappings
// advised for transparent huge pages, released together by their Arena's
// Free: the first touch of each 2 MiB then costs one page fault instead
// of 512. The engine's cache (package rank) and the share reader's kept
// edges (package csr) take their big arrays from it. Advised tells where
// the advice pays (not on a VM that hands free memory back to its host),
// for this package and for the fabric's registered memory. It imports
// nothing of DMG.
package hugemem
