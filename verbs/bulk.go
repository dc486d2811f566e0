package verbs

// MaxBulk bounds one READ or WRITE of a bulk transfer.
const MaxBulk = 8 << 20

// ReadBulk reads len(dst) bytes at src in READs of at most MaxBulk bytes,
// waiting for each (large sequential transfers: attribute arrays,
// mailboxes).
func ReadBulk(ep Endpoint, dst []byte, src Addr) error {
	for len(dst) > 0 {
		n := min(len(dst), MaxBulk)
		if err := ep.Read(dst[:n], src); err != nil {
			return err
		}
		if err := ep.Flush(); err != nil {
			return err
		}
		dst, src = dst[n:], src.Add(uint64(n))
	}
	return nil
}

// WriteBulk writes src at dst in WRITEs of at most MaxBulk bytes.
func WriteBulk(ep Endpoint, dst Addr, src []byte) error {
	for len(src) > 0 {
		n := min(len(src), MaxBulk)
		if err := ep.Write(dst, src[:n]); err != nil {
			return err
		}
		if err := ep.Flush(); err != nil {
			return err
		}
		dst, src = dst.Add(uint64(n)), src[n:]
	}
	return nil
}
