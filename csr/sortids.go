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
// in place (an American flag sort) until its buckets fit. Short rows are
// sorted by comparison, which costs less than clearing a histogram.

const (
	// radixMin is the shortest row sorted by digits.
	radixMin = 768
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
		slices.Sort(d)
		return tmp
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
	case len(d) < radixMin || width == 0:
		if width > 0 {
			slices.Sort(d)
		}
		return tmp
	case len(d) <= radixScratch:
		if cap(tmp) < len(d) {
			tmp = make([]uint32, radixScratch)
		}
		lsd(d, tmp[:len(d)], width)
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
