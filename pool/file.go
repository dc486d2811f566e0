package pool

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/pkg/errors"

	"github.com/dmg-hpc/dmg/outfile"
	"github.com/dmg-hpc/dmg/verbs"
)

// FileVersion is the version of the pool file format this package writes
// and reads.
const FileVersion = 1

// File is a pool file: what a compute job needs to reach a served pool.
// `dmg serve` writes it once every MN has registered its pool; compute jobs
// read it (--pool-file) and check it against the MNs' headers (Connect).
type File struct {
	Version  int       `json:"version"`  // FileVersion
	Token    uint64    `json:"token"`    // random, nonzero; also in every MN's header
	Provider string    `json:"provider"` // libfabric provider as opened, e.g. "shm", "tcp;ofi_rxm"
	Created  time.Time `json:"created"`
	MNs      []MN      `json:"mns"`
}

// MN is one memory node of a pool file, by MN id.
type MN struct {
	Host string `json:"host"`
	PID  int    `json:"pid"`
	Size uint64 `json:"size"` // pool bytes
	Base uint64 `json:"base"` // remote address of offset 0 as the provider expects it (0 unless virtual addressing)
	Key  uint64 `json:"key"`  // memory key
	Name []byte `json:"name"` // fabric endpoint address (base64 in JSON)
}

// FileError is a pool file that is unreadable, malformed, or does not
// match the pool it names: the user's input, not a run-time failure.
type FileError struct {
	Path string // "" when decoding bytes that came from no file
	Msg  string // what is wrong, following "pool file PATH: "
	// Predicate: Msg continues the sentence "pool file PATH ..." (no colon).
	Predicate bool
}

func (e *FileError) Error() string {
	sep := ": "
	if e.Predicate {
		sep = " "
	}
	if e.Path == "" {
		return "pool file" + sep + e.Msg
	}
	return "pool file " + e.Path + sep + e.Msg
}

// BadInput marks the error as the user's input (exit status 2).
func (e *FileError) BadInput() bool { return true }

// Validate checks f: the version, a nonzero token, a provider, 1..MaxMN
// MNs, each with a pool of at least DataStart bytes (a multiple of 8 that
// a 48-bit offset can address) and an endpoint name.
func (f *File) Validate() error {
	if f == nil {
		return &FileError{Msg: "no pool file given"}
	}
	var problems []string
	add := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	if f.Version != FileVersion {
		add("version %d is not supported; expected %d (written by another release of dmg?)", f.Version, FileVersion)
	}
	if f.Token == 0 {
		add("token is 0; expected the pool's nonzero random token")
	}
	if f.Provider == "" {
		add("provider is empty; expected the libfabric provider the pool was served with, e.g. \"shm\"")
	}
	switch {
	case len(f.MNs) == 0:
		add("no mns; expected 1..%d memory nodes", MaxMN)
	case len(f.MNs) > MaxMN:
		add("%d mns; a pool has at most %d memory nodes", len(f.MNs), MaxMN)
	}
	for i, m := range f.MNs {
		switch {
		case m.Size < DataStart:
			add("mns[%d]: size %d is below %s; expected a pool of at least %d bytes", i, m.Size, fmtBytes(DataStart), uint64(DataStart))
		case m.Size%8 != 0:
			add("mns[%d]: size %d is not a multiple of 8", i, m.Size)
		case m.Size > verbs.MaxOffset+1:
			add("mns[%d]: size %d exceeds the 48-bit offset space", i, m.Size)
		}
		if len(m.Name) == 0 {
			add("mns[%d]: name is empty; expected the MN's fabric endpoint address", i)
		}
		if m.PID < 0 {
			add("mns[%d]: pid %d is negative", i, m.PID)
		}
		if len(problems) >= 8 {
			add("...")
			break
		}
	}
	if len(problems) == 0 {
		return nil
	}
	msg := problems[0]
	for _, p := range problems[1:] {
		msg += "; " + p
	}
	return &FileError{Msg: msg}
}

// Decode parses and validates a pool file's contents. It is strict:
// unknown fields and trailing data are refused.
func Decode(b []byte) (*File, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var f File
	if err := dec.Decode(&f); err != nil {
		return nil, &FileError{Msg: fmt.Sprintf("not a pool file (expected the JSON object `dmg serve` writes): %v", err)}
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, &FileError{Msg: "trailing data after the JSON object; expected one object"}
	}
	if err := f.Validate(); err != nil {
		return nil, err
	}
	return &f, nil
}

// ReadFile reads and decodes the pool file at path.
func ReadFile(path string) (*File, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, errors.Wrapf(err, "pool file %s: cannot read it (is the path the one `dmg serve --pool-file` was given?)", path)
	}
	f, err := Decode(b)
	if err != nil {
		var fe *FileError
		if errors.As(err, &fe) {
			return nil, fe.at(path)
		}
		return nil, errors.Wrapf(err, "pool file %s", path)
	}
	return f, nil
}

// WriteFile validates f and writes it to path through outfile (mode
// 0600): to a temporary in the same directory, synced, then renamed over
// path. Readers see either the old file or the new one, never a part.
func WriteFile(path string, f *File) (err error) {
	if verr := f.Validate(); verr != nil {
		var fe *FileError
		if errors.As(verr, &fe) {
			return &FileError{Path: path, Msg: "refusing to write it: " + fe.Msg}
		}
		return verr
	}
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return errors.Wrapf(err, "pool file %s: encoding", path)
	}
	b = append(b, '\n')
	// Mode 0600: the file holds the pools' memory keys. Volatile: the
	// pools it names are memory, gone with the host.
	return outfile.Options{Mode: 0o600, Volatile: true}.WriteFile(path, b)
}

// NewToken returns a random nonzero token from crypto/rand.
func NewToken() (uint64, error) {
	var b [8]byte
	for range 16 {
		if _, err := rand.Read(b[:]); err != nil {
			return 0, errors.Wrap(err, "pool: reading random bytes for a token")
		}
		if t := binary.LittleEndian.Uint64(b[:]); t != 0 {
			return t, nil
		}
	}
	return 0, errors.New("pool: the random source returned only zeros")
}

// fmtBytes formats n as "12 B", "4 KiB", "1.5 GiB".
func fmtBytes(n uint64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	units := []string{"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	v := float64(n) / unit
	i := 0
	for v >= unit && i < len(units)-1 {
		v /= unit
		i++
	}
	if v == float64(uint64(v)) {
		return fmt.Sprintf("%d %s", uint64(v), units[i])
	}
	return fmt.Sprintf("%.1f %s", v, units[i])
}

// at is a copy of e naming path.
func (e *FileError) at(path string) *FileError {
	c := *e
	c.Path = path
	return &c
}

// Addrs are the file's MNs as the fabric takes them (fabric.Attach).
func (f *File) Addrs() []verbs.PoolAddr {
	addrs := make([]verbs.PoolAddr, len(f.MNs))
	for m, mn := range f.MNs {
		addrs[m] = verbs.PoolAddr{Size: mn.Size, Base: mn.Base, Key: mn.Key, Name: mn.Name}
	}
	return addrs
}
