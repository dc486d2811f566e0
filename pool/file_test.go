package pool

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/pkg/errors"
)

func validFile() *File {
	return &File{
		Version:  FileVersion,
		Token:    0xdeadbeef,
		Provider: "tcp;ofi_rxm",
		Created:  time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC),
		MNs: []MN{
			{Host: "mn0", PID: 100, Size: 1 << 30, Key: 7, Name: []byte{1, 2, 3}},
			{Host: "mn1", PID: 101, Size: 1 << 21, Base: 0x7f0000000000, Key: 8, Name: []byte{4}},
		},
	}
}

func encode(t testing.TB, f *File) []byte {
	b, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestDecodeErrors(t *testing.T) {
	tests := []struct {
		name   string
		change func(f *File)
		raw    string // used instead of the changed valid file when set
		want   string
	}{
		{name: "valid", change: func(*File) {}},
		{name: "version", change: func(f *File) { f.Version = 2 }, want: "version 2 is not supported"},
		{name: "token", change: func(f *File) { f.Token = 0 }, want: "token is 0"},
		{name: "provider", change: func(f *File) { f.Provider = "" }, want: "provider is empty"},
		{name: "no MNs", change: func(f *File) { f.MNs = nil }, want: "no mns"},
		{name: "too many MNs", change: func(f *File) {
			for len(f.MNs) <= MaxMN {
				f.MNs = append(f.MNs, f.MNs[0])
			}
		}, want: "33 mns; a pool has at most 32"},
		{name: "small", change: func(f *File) { f.MNs[1].Size = 12 }, want: "pool file: mns[1]: size 12 is below 1 MiB"},
		{name: "unaligned", change: func(f *File) { f.MNs[0].Size = DataStart + 4 }, want: "mns[0]: size 1048580 is not a multiple of 8"},
		{name: "huge", change: func(f *File) { f.MNs[0].Size = 1 << 50 }, want: "48-bit"},
		{name: "no name", change: func(f *File) { f.MNs[1].Name = nil }, want: "mns[1]: name is empty"},
		{name: "two problems", change: func(f *File) { f.Token, f.MNs[0].Name = 0, nil }, want: "nonzero random token; mns[0]: name is empty"},
		{name: "unknown field", raw: `{"version":1,"token":1,"provider":"shm","mns":[],"extra":1}`, want: `unknown field "extra"`},
		{name: "not JSON", raw: `hello`, want: "not a pool file"},
		{name: "empty", raw: ``, want: "not a pool file"},
		{name: "trailing", raw: string(encode(t, validFile())) + `{}`, want: "trailing data"},
		{name: "wrong type", raw: `{"version":"1"}`, want: "not a pool file"},
		{name: "bad base64", raw: `{"version":1,"token":1,"provider":"shm","mns":[{"host":"h","size":1048576,"name":"!!"}]}`, want: "not a pool file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b []byte
			if tt.raw != "" || tt.change == nil {
				b = []byte(tt.raw)
			} else {
				f := validFile()
				tt.change(f)
				b = encode(t, f)
			}
			f, err := Decode(b)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("Decode: %v", err)
				}
				if !reflect.DeepEqual(f, validFile()) {
					t.Fatalf("Decode = %+v; want %+v", f, validFile())
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Decode error = %v; want it to contain %q", err, tt.want)
			}
			var fe *FileError
			if !errors.As(err, &fe) || !fe.BadInput() {
				t.Fatalf("Decode error %T is not a *FileError", err)
			}
		})
	}
}

func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "pool.json")
	f := validFile()
	if err := WriteFile(path, f); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v; want 0600", st.Mode().Perm())
	}
	got, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, f) {
		t.Fatalf("read back %+v; want %+v", got, f)
	}

	// Overwrite: a new inode replaces the old one whole.
	f2 := validFile()
	f2.Token = 42
	f2.MNs = f2.MNs[:1]
	if err := WriteFile(path, f2); err != nil {
		t.Fatal(err)
	}
	st2, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if os.SameFile(st, st2) {
		t.Fatal("overwrite wrote the old file in place; want a rename over it")
	}
	if got, err = ReadFile(path); err != nil || got.Token != 42 || len(got.MNs) != 1 {
		t.Fatalf("after overwrite: %+v, %v", got, err)
	}

	// Invalid files are refused and leave the old one.
	bad := validFile()
	bad.Token = 0
	if err := WriteFile(path, bad); err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "token is 0") {
		t.Fatalf("WriteFile(invalid) = %v; want an error naming the path and the token", err)
	}
	if got, err = ReadFile(path); err != nil || got.Token != 42 {
		t.Fatalf("after a refused write: %+v, %v", got, err)
	}

	// A directory that does not exist.
	if err := WriteFile(filepath.Join(dir, "no", "pool.json"), f); err == nil || !strings.Contains(err.Error(), "no/pool.json") {
		t.Fatalf("WriteFile(missing dir) = %v; want an error naming the path", err)
	}

	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != 1 || ents[0].Name() != "pool.json" {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Fatalf("directory holds %v; want only pool.json (no temporary files)", names)
	}
}

func TestReadFileErrors(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing.json")
	if _, err := ReadFile(missing); err == nil || !strings.Contains(err.Error(), missing) {
		t.Fatalf("ReadFile(missing) = %v; want an error naming the file", err)
	}
	garbage := filepath.Join(dir, "garbage.json")
	if err := os.WriteFile(garbage, []byte(`{"version":1}`), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := ReadFile(garbage)
	if err == nil || !strings.Contains(err.Error(), "pool file "+garbage+": ") || !strings.Contains(err.Error(), "token is 0") {
		t.Fatalf("ReadFile(garbage) = %v; want an error naming the file and the problem", err)
	}
}

func TestNewToken(t *testing.T) {
	a, err := NewToken()
	if err != nil || a == 0 {
		t.Fatalf("NewToken = %#x, %v", a, err)
	}
	b, err := NewToken()
	if err != nil || a == b {
		t.Fatalf("two tokens %#x %#x, %v; want different ones", a, b, err)
	}
}

func FuzzDecode(f *testing.F) {
	f.Add(encode(f, validFile()))
	one := validFile()
	one.MNs = one.MNs[:1]
	f.Add(encode(f, one))
	f.Add([]byte(`{"version":1,"token":1,"provider":"shm","created":"2024-01-01T00:00:00+01:00","mns":[{"host":"h","pid":1,"size":1048576,"base":0,"key":0,"name":"AQ=="}]}`))
	f.Add([]byte(`{"version":1,"token":0,"provider":"shm","mns":[]}`))
	f.Add([]byte(`{"version":1,"token":1,"provider":"shm","mns":[{"size":12,"name":""}]}`))
	f.Add([]byte(`{"version":1,"extra":true}`))
	f.Add([]byte(`[]`))
	f.Add([]byte(`{`))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := Decode(b)
		if err != nil {
			return
		}
		again, err := json.Marshal(got)
		if err != nil {
			t.Fatalf("re-encoding a decoded file: %v", err)
		}
		back, err := Decode(again)
		if err != nil {
			t.Fatalf("decoding a re-encoded file: %v\n%s", err, again)
		}
		if !back.Created.Equal(got.Created) {
			t.Fatalf("created %v became %v", got.Created, back.Created)
		}
		back.Created, got.Created = time.Time{}, time.Time{}
		if !reflect.DeepEqual(back, got) {
			t.Fatalf("round trip changed the file:\n%+v\n%+v", got, back)
		}
	})
}
