package csr

import (
	"math/bits"
	"slices"
)

// A row's ids are sorted before its duplicates are dropped (finishRows),
// and at scale the sort is the largest part of building rows: a profile
// of the kron:26 load put pdqsort's comparisons at 92 s of a CN's 560
// CPU-seconds, a third of that in the hubs' rows (one of 33 M entries).
// Ids are small unsigned integers, so rows are sorted by their digits
// instead: a row that fits radixScratch by least significant digit first
// through a scratch buffer, a larger one by its most significant digit
// in place (an American flag sort) until its buckets fit. A shorter row
// goes through the scratch buffer into buckets of its top digit, a
// bucket for every id or two, which it then sorts by insertion: on rows
// of random ids the comparisons of a sort mispredict half their
// branches. BenchmarkSortIDs on a quiet machine, ns an id (26-bit ids,
// every row different): 16 ids 12.4 by buckets against 13.5 by
// pdqsort, 64 ids 10.9 against 22.6, 256 ids 9.1 against 29.4 (8.2 by
// digits), 767 ids 9.6 and 34.7 (5.8 by digits). The shortest rows are
// sorted by comparison, which costs less than clearing a histogram.

const (
	// bucketMin is the shortest row sorted by buckets.
	bucketMin = 16
	// radixMin is the shortest row sorted by digits.
	radixMin = 256
	// radixScratch is the longest row sorted through the scratch buffer
	// (256 KiB of it).
	radixScratch = 1 << 16
	// radixMSD is the width of the in-place pass's digit.
	radixMSD = 8
)

// sortIDs sorts d in increasing order; tmp is a scratch buffer it may
// grow (to radixScratch at most) and returns for the next call.
func sortIDs(d, tmp []uint32) []uint32 {
	if len(d) < radixMin {
		return sortShort(d, tmp)
	}
	var or uint32
	for _, x := range d {
		or |= x
	}
	return sortBits(d, uint(bits.Len32(or)), tmp)
}

// sortBits sorts d, whose ids are below 2^width.
func sortBits(d []uint32, width uint, tmp []uint32) []uint32 {
	switch {
	case width == 0:
		return tmp
	case len(d) < radixMin:
		return sortShort(d, tmp)
	case len(d) <= radixScratch:
		tmp = scratch(tmp, len(d))
		lsd(d, tmp, width)
		return tmp
	}
	shift := width - min(width, radixMSD)
	const mask = 1<<radixMSD - 1 // the bits above width are the same in every id
	var next, end [1 << radixMSD]int
	for _, x := range d {
		end[x>>shift&mask]++
	}
	at := 0
	for b, c := range end {
		next[b], end[b] = at, at+c
		at += c
	}
	for b := range end {
		for next[b] < end[b] {
			x := d[next[b]]
			for k := x >> shift & mask; int(k) != b; k = x >> shift & mask {
				x, d[next[k]] = d[next[k]], x
				next[k]++
			}
			d[next[b]] = x
			next[b]++
		}
	}
	lo := 0 // a bucket's ids share their digits above shift
	for _, hi := range end {
		tmp = sortBits(d[lo:hi], shift, tmp)
		lo = hi
	}
	return tmp
}

// lsd sorts d by its low width bits, least significant digit first, in
// as few passes of up to 11 bits as cover them, through tmp (as long as
// d).
func lsd(d, tmp []uint32, width uint) {
	passes := (width + 10) / 11
	digit := (width + passes - 1) / passes
	var count [1 << 11]int
	src, dst := d, tmp
	for p := range passes {
		shift := p * digit
		mask := uint32(1)<<digit - 1
		c := count[:1<<digit]
		clear(c)
		for _, x := range src {
			c[x>>shift&mask]++
		}
		at := 0
		for i, k := range c {
			c[i] = at
			at += k
		}
		for _, x := range src {
			k := x >> shift & mask
			dst[c[k]] = x
			c[k]++
		}
		src, dst = dst, src
	}
	if passes%2 == 1 {
		copy(d, src)
	}
}

// scratch is tmp if it holds n ids, else a new radixScratch buffer, cut
// to n.
func scratch(tmp []uint32, n int) []uint32 {
	if cap(tmp) < n {
		tmp = make([]uint32, radixScratch)
	}
	return tmp[:n]
}

// sortShort sorts a row shorter than radixMin: by comparison below
// bucketMin, else by buckets through tmp.
func sortShort(d, tmp []uint32) []uint32 {
	if len(d) < bucketMin {
		slices.Sort(d)
		return tmp
	}
	tmp = scratch(tmp, len(d))
	bucketSort(d, tmp)
	return tmp
}

// bucketSort sorts d (below radixMin ids) through tmp (as long as d):
// one pass into buckets of the top digit of each id's distance from the
// least, about one bucket per id (256 at most), then each bucket by
// insertion, or by comparison if ids that cluster made it long.
func bucketSort(d, tmp []uint32) {
	lo, hi := d[0], d[0]
	for _, x := range d[1:] {
		lo, hi = min(lo, x), max(hi, x)
	}
	span := uint(bits.Len32(hi - lo))
	if span == 0 {
		return // one id, repeated
	}
	digit := min(uint(bits.Len(uint(len(d))))-1, 8, span)
	shift := span - digit
	var count, next [1<<8 + 1]uint16 // radixMin ids fit
	c := count[:1<<digit+1]
	for _, x := range d {
		c[(x-lo)>>shift+1]++
	}
	for b := 1; b < len(c); b++ {
		c[b] += c[b-1]
	}
	copy(next[:], c)
	for _, x := range d {
		k := (x - lo) >> shift
		tmp[next[k]] = x
		next[k]++
	}
	for b := range len(c) - 1 {
		s := tmp[c[b]:c[b+1]]
		if len(s) > 12 {
			slices.Sort(s)
			continue
		}
		for i := 1; i < len(s); i++ {
			x, j := s[i], i
			for ; j > 0 && s[j-1] > x; j-- {
				s[j] = s[j-1]
			}
			s[j] = x
		}
	}
	copy(d, tmp)
}
