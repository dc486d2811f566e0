module github.com/dmg-hpc/dmg

go 1.26

require github.com/pkg/errors v0.9.1

require (
	github.com/dustin/go-humanize v1.1.0 // indirect
	github.com/sbromberger/gompi v0.2.0 // indirect
)
