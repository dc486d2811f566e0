module github.com/dmg-hpc/dmg

go 1.26

require (
	github.com/dustin/go-humanize v1.1.0
	github.com/pkg/errors v0.9.1
	github.com/sbromberger/gompi v0.2.0
	github.com/spf13/cobra v1.10.2
	github.com/spf13/pflag v1.0.9
)

require github.com/inconshreveable/mousetrap v1.1.0 // indirect
