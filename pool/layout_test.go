package pool

import (
	"encoding/binary"
	"reflect"
	"strings"
	"testing"
)

func TestLayoutConstants(t *testing.T) {
	if got := binary.LittleEndian.Uint64([]byte("DMGPOOL1")); got != Magic {
		t.Fatalf("Magic = %#x; want %#x", Magic, got)
	}
	if SlotBytes%64 != 0 || slotUsed > SlotBytes {
		t.Fatalf("SlotBytes %d: used %d; want a multiple of 64 that holds every field", SlotBytes, slotUsed)
	}
	if SlotsOff+CatalogueBytes > DataStart || SlotsOff%64 != 0 {
		t.Fatalf("catalogue [%d, %d) must be 64-aligned and below DataStart", SlotsOff, SlotsOff+CatalogueBytes)
	}
	for _, off := range []uint64{OffState, OffLease, OffBeat} {
		if a := SlotAddr(3) + 0; (uint64(a)+off)%8 != 0 {
			t.Fatalf("slot word at %#x is not 8-aligned", uint64(a)+off)
		}
	}
	if SlotAddr(1)-SlotAddr(0) != SlotBytes || SlotAddr(0).MN() != 0 || SlotAddr(0).Offset() != SlotsOff {
		t.Fatalf("SlotAddr: %v %v", SlotAddr(0), SlotAddr(1))
	}
}

func TestSlotRoundTrip(t *testing.T) {
	full := Slot{State: Job, Lease: 9, Beat: 10, Created: 11, Name: strings.Repeat("n", MaxName), Graph: 5, CNs: 4,
		Vertices: 1 << 40, Edges: 1 << 41, Aux: Extent{MN: 1, Off: DataStart, Len: Align}}
	for m := range MaxMN {
		full.Ext = append(full.Ext, Extent{MN: m, Off: uint64(m) * Align, Len: Align})
	}
	ckpt := Slot{State: Checkpoint, Lease: 7, Name: "g", Graph: -1, CNs: 3, Vertices: 99, Aux: Extent{MN: 1, Off: DataStart, Len: 2 * Align},
		Kernel: strings.Repeat("k", CkptKernelBytes), Params: 0xfeed, Done: 1234}
	for _, s := range []Slot{{Graph: -1}, {State: Ready, Name: "g", Graph: -1, Ext: []Extent{{MN: 0}, {MN: 1, Off: 1, Len: 2}}}, full, ckpt} {
		b := make([]byte, SlotBytes)
		if err := s.Encode(b); err != nil {
			t.Fatal(err)
		}
		got, err := DecodeSlot(b)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, s) {
			t.Fatalf("round trip: %+v; want %+v", got, s)
		}
		if State(binary.LittleEndian.Uint64(b[OffState:])) != s.State || binary.LittleEndian.Uint64(b[OffLease:]) != s.Lease ||
			binary.LittleEndian.Uint64(b[OffBeat:]) != s.Beat {
			t.Fatal("state, lease and beat are not at their word offsets")
		}
	}
	bad := []Slot{{Name: strings.Repeat("x", MaxName+1)}, {Ext: make([]Extent, MaxMN+1)}, {State: 9}, {State: Checkpoint, Kernel: strings.Repeat("k", CkptKernelBytes+1)}}
	for _, s := range bad {
		if err := s.Encode(make([]byte, SlotBytes)); err == nil {
			t.Fatalf("Encode(%+v) succeeded; want an error", s)
		}
	}
	b := make([]byte, SlotBytes)
	b[OffState] = 7
	if _, err := DecodeSlot(b); err == nil || !strings.Contains(err.Error(), "state 7 unknown") {
		t.Fatalf("DecodeSlot(state 7) = %v", err)
	}
	b[OffState] = byte(Checkpoint)
	binary.LittleEndian.PutUint64(b[offKernLen:], CkptKernelBytes+1)
	if _, err := DecodeSlot(b); err == nil || !strings.Contains(err.Error(), "kernel name length") {
		t.Fatalf("DecodeSlot(a kernel name of %d bytes) = %v", CkptKernelBytes+1, err)
	}
}

func TestLocalHeader(t *testing.T) {
	mem := make([]uint64, DataStart/8)
	p := unsafeBytes(mem)
	if err := CheckPool(p[:100]); err == nil {
		t.Fatal("CheckPool accepted a 100-byte pool")
	}
	InitHeader(p[:100], 1, 0, 1) // ignored, no panic
	InitHeader(p, 0xabc, 2, 3)
	le := binary.LittleEndian
	if le.Uint64(p[HdrMagic:]) != Magic || le.Uint64(p[HdrToken:]) != 0xabc || le.Uint64(p[HdrMN:]) != 2 || le.Uint64(p[HdrNumMN:]) != 3 || le.Uint64(p[HdrSize:]) != uint64(len(p)) {
		t.Fatalf("header words %v", mem[:hdrWords])
	}
	if StopRequested(p) {
		t.Fatal("stop set by InitHeader")
	}
	mem[HdrStop/8] = 1
	if !StopRequested(p) || StopRequested(nil) {
		t.Fatal("StopRequested")
	}
	SetBeat(p, 1234)
	if mem[HdrBeat/8] != 1234 {
		t.Fatal("SetBeat")
	}
	mem[LockOff/8], mem[SlotsOff/8+3] = 5, 6
	InitCatalogue(p)
	if mem[LockOff/8] != 0 || mem[SlotsOff/8+3] != 0 || mem[HdrBeat/8] != 1234 {
		t.Fatal("InitCatalogue")
	}
}

func TestFmtBytes(t *testing.T) {
	for n, want := range map[uint64]string{12: "12 B", 4096: "4 KiB", 1 << 20: "1 MiB", 3 << 29: "1.5 GiB"} {
		if got := fmtBytes(n); got != want {
			t.Errorf("fmtBytes(%d) = %q; want %q", n, got, want)
		}
	}
}

// Any bytes decode to a slot or an error, and a decoded slot encodes back
// to the same slot.
func FuzzDecodeSlot(f *testing.F) {
	b := make([]byte, SlotBytes)
	s := Slot{State: Checkpoint, Lease: 7, Name: "g", Graph: -1, Kernel: "pagerank", Params: 3, Done: 50, Ext: []Extent{{MN: 1, Off: 2, Len: 3}}}
	if err := s.Encode(b); err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Add(make([]byte, SlotBytes))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := DecodeSlot(b)
		if err != nil {
			return
		}
		again := make([]byte, SlotBytes)
		if err := s.Encode(again); err != nil {
			t.Fatalf("a decoded slot %+v does not encode: %v", s, err)
		}
		s2, err := DecodeSlot(again)
		if err != nil || !reflect.DeepEqual(s, s2) {
			t.Fatalf("re-encoded %+v decodes to %+v, %v", s, s2, err)
		}
	})
}
