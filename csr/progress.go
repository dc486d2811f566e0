package csr

import (
	"io"
	"os"
	"sync/atomic"
)

// OpenProgress is Open reporting how far it has read: progress gets the
// bytes read so far from the input files (before decompression, for
// gzipped ones) and their total size, from the goroutine that reads
// them, often (after every read of up to a MiB: throttle the display).
// Generators read no file and report nothing. When the last byte is
// read, the graph is still to be built (the builder takes about a third
// of the time of a text input's read).
func OpenProgress(spec string, opts Options, progress func(done, total int64)) (*Graph, *Meta, error) {
	rc := &readConfig{}
	if progress != nil {
		rc.progress = &progressCounter{report: progress}
	}
	return open(spec, opts, rc)
}

// progressCounter counts the bytes read of the files of one read.
type progressCounter struct {
	done, total atomic.Int64
	report      func(done, total int64)
}

// expect adds the sizes of files to the total to read (those it cannot
// stat count nothing: opening them fails anyway).
func (rc *readConfig) expect(paths ...string) {
	if rc == nil || rc.progress == nil {
		return
	}
	for _, p := range paths {
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
			rc.progress.total.Add(st.Size())
		}
	}
	rc.progress.report(rc.progress.done.Load(), rc.progress.total.Load())
}

// countingReader counts what it reads into a progressCounter.
type countingReader struct {
	r io.Reader
	p *progressCounter
}

func (c *countingReader) Read(b []byte) (int, error) {
	n, err := c.r.Read(b)
	if n > 0 {
		c.p.report(c.p.done.Add(int64(n)), c.p.total.Load())
	}
	return n, err
}
