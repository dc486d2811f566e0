package csr

import (
	"bytes"
	"io"
	"sync"

	"github.com/pkg/errors"
)

// The text readers parse their input in blocks: byte ranges of whole
// lines, each about textBlockBytes long (a longer line makes a longer
// block). One goroutine reads the input in order, so a gzipped file goes
// through one decompressor and a plain file is read sequentially, and up
// to Options.Workers goroutines parse the blocks. The caller's goroutine
// then takes the parsed blocks in input order, so what the readers return
// does not depend on the number of workers or on where the blocks end.
// Each block counts its lines: an error's line number is the block's
// first line plus the line within the block.

// textBlockBytes is the size a block of a text input aims at.
const textBlockBytes = 1 << 20

// MaxLineBytes bounds one line of a text input (without its line end):
// a longer line is an InputError naming the file, the line and the
// limit, so that an input without line ends (/dev/zero) cannot make a
// reader grow without bound.
const MaxLineBytes = 1 << 20

// readConfig carries what a read wants besides Options: a progress
// counter and, for tests, where blocks end. The zero value (or nil) is
// the default.
type readConfig struct {
	// blockBytes, if set, gives the size each next block aims at (at
	// least 1 byte); tests use it to cut inputs anywhere.
	blockBytes func() int
	// progress, if set, counts the bytes read from the input files.
	progress *progressCounter
	// careful, for tests, parses every line the careful way (the slow
	// path of the parsers), as a line-by-line reader: the reference the
	// fast paths are compared with.
	careful bool
	// vertexBound, for tests of staged reads, bounds the vertices the
	// first staging memory has room for (0: the sketch's bound), so that
	// the second Open is taken.
	vertexBound uint64
	// wideRecords, for tests of staged reads, routes their edges as 8-byte
	// records where 6-byte ones would do (records.go).
	wideRecords bool
	// maxLine, for tests, replaces MaxLineBytes (0: MaxLineBytes).
	maxLine int
}

func (rc *readConfig) maxLineBytes() int {
	if rc == nil || rc.maxLine <= 0 {
		return MaxLineBytes
	}
	return rc.maxLine
}

func (rc *readConfig) slowOnly() bool { return rc != nil && rc.careful }

func (rc *readConfig) nextBlockBytes() int {
	if rc == nil || rc.blockBytes == nil {
		return textBlockBytes
	}
	return max(1, rc.blockBytes())
}

// blockReader cuts a stream into blocks of whole lines.
type blockReader struct {
	r     io.Reader
	rc    *readConfig
	file  string // for messages
	lines int64  // the lines of the blocks returned so far
	carry []byte // the partial line that ended the last block
	err   error  // sticky: io.EOF or the read error
}

// next fills buf with the next block: whole lines (at the end of the
// input, a last line without '\n'). It returns the block, whether the
// input ended with it, and a read error (not io.EOF) met after it; the
// partial line before a read error is dropped, as lineReader does. A line
// longer than the limit (MaxLineBytes) is such an error, an InputError.
func (br *blockReader) next(buf []byte) (data []byte, end bool, rerr error) {
	data, end, rerr = br.cut(buf)
	br.lines += countLines(data)
	return data, end, rerr
}

func (br *blockReader) cut(buf []byte) (data []byte, end bool, rerr error) {
	limit := br.rc.maxLineBytes()
	target := min(br.rc.nextBlockBytes(), limit) // so only a block's first line can be too long
	buf = append(buf[:0], br.carry...)
	br.carry = br.carry[:0]
	searched := 0 // the bytes of buf known to hold no '\n'
	empty := 0
	for {
		if len(buf) >= target || br.err != nil {
			cut := -1
			if i := bytes.LastIndexByte(buf[searched:], '\n'); i >= 0 {
				cut = searched + i + 1
			}
			// A block aims at no more than the limit: only a longer one
			// (a line that did not end within it) can hold a long line.
			whole := buf
			if br.err != io.EOF {
				whole = buf[:max(cut, 0)]
			}
			if k := longLine(whole, limit); k > 0 || (cut < 0 && br.err == nil && len(buf) > limit) {
				if k == 0 {
					k = 1
				}
				br.err = lineErr(br.file, br.lines+k, "a line longer than %d bytes (the limit of one line of a text input); expected lines of a few fields, each ending in a line feed", limit)
				return buf[:0], true, br.err
			}
			switch {
			case br.err == io.EOF:
				return buf, true, nil
			case br.err != nil:
				return buf[:max(cut, 0)], true, br.err
			}
			if cut >= 0 {
				br.carry = append(br.carry, buf[cut:]...)
				return buf[:cut], false, nil
			}
			searched = len(buf) // a line longer than the block: read on
		}
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		want := cap(buf)
		if len(buf) < target {
			want = min(want, target)
		}
		n, err := br.r.Read(buf[len(buf):want])
		buf = buf[:len(buf)+n]
		switch {
		case err != nil:
			br.err = err
		case n == 0:
			if empty++; empty == 100 {
				br.err = io.ErrNoProgress
			}
		default:
			empty = 0
		}
	}
}

// longLine is the number (from 1) of data's first line longer than limit
// bytes, or 0; it looks only when data is longer than limit.
func longLine(data []byte, limit int) int64 {
	if len(data) <= limit {
		return 0
	}
	var k int64
	for len(data) > 0 {
		k++
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			i = len(data)
		}
		if i > limit {
			return k
		}
		data = data[min(i+1, len(data)):]
	}
	return 0
}

// countLines is the number of lines of a block: its '\n's, plus one for a
// last line without one.
func countLines(data []byte) int64 {
	n := int64(bytes.Count(data, []byte{'\n'}))
	if len(data) > 0 && data[len(data)-1] != '\n' {
		n++
	}
	return n
}

// textBlock is a block on its way from the reader through a parser to
// the consumer.
type textBlock[R any] struct {
	buf   []byte
	data  []byte
	end   bool
	rerr  error
	lines int64
	res   R
	done  chan struct{}
}

// parseText reads r in blocks and parses each with a parser made by
// newParser (one per worker goroutine; a parser may keep scratch buffers
// between its blocks), then hands the results to use in input order,
// with the number of lines before the block. A parser fills res, which
// holds the result of an earlier block that use is done with (or the
// zero R): it may reuse its buffers, unless use keeps them. parseText
// stops at the first error of use or of reading, and returns the number
// of lines read.
func parseText[R any](r io.Reader, file string, workers int, rc *readConfig, newParser func() func(data []byte, res *R), use func(res R, line0 int64) error) (int64, error) {
	return parseTextAfter(r, file, 0, workers, rc, newParser, use)
}

// parseTextAfter is parseText of the lines after the first skipped of
// file (a header read line by line): they count in the line number of a
// line too long; use still sees line numbers from 0.
func parseTextAfter[R any](r io.Reader, file string, skipped int64, workers int, rc *readConfig, newParser func() func(data []byte, res *R), use func(res R, line0 int64) error) (int64, error) {
	br := &blockReader{r: r, rc: rc, file: file, lines: skipped}
	var line int64
	// readErr is a read error as lineReader reports it.
	readErr := func(err error) error {
		if IsInputError(err) {
			return err
		}
		return errors.Wrapf(err, "csr: reading %s", file)
	}
	if workers <= 1 {
		parse := newParser()
		var buf []byte
		var res R
		for {
			data, end, rerr := br.next(buf)
			buf = data[:0]
			if len(data) > 0 {
				parse(data, &res)
				if err := use(res, line); err != nil {
					return line, err
				}
				line += countLines(data)
			}
			if rerr != nil {
				return line, readErr(rerr)
			}
			if end {
				return line, nil
			}
		}
	}

	inflight := 2*workers + 2
	free := make(chan *textBlock[R], inflight)
	for range inflight {
		free <- &textBlock[R]{}
	}
	work := make(chan *textBlock[R], inflight)
	order := make(chan *textBlock[R], inflight)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // the reader
		defer wg.Done()
		defer close(order)
		defer close(work)
		for {
			var b *textBlock[R]
			select {
			case b = <-free:
			case <-stop:
				return
			}
			b.data, b.end, b.rerr = br.next(b.buf)
			b.buf = b.data[:0]
			b.done = make(chan struct{})
			order <- b
			work <- b
			if b.end {
				return
			}
		}
	}()
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			parse := newParser()
			for b := range work {
				select {
				case <-stop:
				default:
					if len(b.data) > 0 {
						parse(b.data, &b.res)
						b.lines = countLines(b.data)
					}
				}
				close(b.done)
			}
		}()
	}
	defer func() {
		close(stop)
		wg.Wait()
	}()
	for b := range order {
		<-b.done
		if len(b.data) > 0 {
			if err := use(b.res, line); err != nil {
				return line, err
			}
			line += b.lines
		}
		if b.rerr != nil {
			return line, readErr(b.rerr)
		}
		b.data = nil
		free <- b
	}
	return line, nil
}
