module metareactor.dev/loadkit

go 1.24
