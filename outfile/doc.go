// Package outfile writes the files a user names on the command line
// (--out, --json, convert's OUT, bench suite's outputs, serve's pool file,
// --cpuprofile): every one of them goes through Write or Create, so every
// output flag means the same thing.
//
// What a path names decides how it is written (Resolve):
//
//   - "-" is standard output.
//   - A missing path or a regular file is written to a temporary beside it
//     (TempPattern), synced and renamed over it: on any error a file
//     already there is left untouched and no partial output remains.
//   - A character device, FIFO or pipe is written through, in place: it is
//     never replaced (as root, --out /dev/null stays the device).
//   - A symbolic link is followed: its target is written as above (a
//     regular target is replaced by rename, so the link stays a link). A
//     link whose target is missing is refused.
//   - A directory, a socket or a block device is refused.
//
// Distinct refuses two outputs of one command naming the same file (after
// following links and cleaning the path, or the same inode), or both
// standard output: one would silently overwrite the other.
//
// A path that cannot be written is an *Error: bad input to a command line,
// found by Check before a long computation where possible.
package outfile
