// Command loadkit is the load harness's native half: the hooks every engine under test calls, and the bulk
// API clients that create, edit and write objects as fast as the API server takes them. It is written in Go with
// the standard library only so that it costs as little CPU as possible beside the engine being measured, and so
// that the API server's raw write ceiling is measured with a plain client, not with the engine's own stack.
//
// The Java driver (dev.metareactor.load.LoadHarness) starts it; see benchmarks/README.md.
//
//	loadkit hook    --listen 127.0.0.1:0 --port-file F
//	loadkit create  --api API --namespace NS --count N --children M [--related K] [--map]
//	loadkit edit    --api API --namespace NS --count N --value V [--map]
//	loadkit trickle --api API --namespace NS --count N --rate R --duration D [--map]
//	loadkit ceiling --api API --namespace NS --count K
//
// API is given by --server, --ca, --cert and --key (PEM files). The hook answers POST /sync (CompositeController),
// /decorate (DecoratorController), /map (MapController) and /customize (either of the first two). With --map, the N
// objects created, edited and trickled are input ConfigMaps of one parent that selects them, not N parents. With
// --related K, create first makes K shared ConfigMaps and parent i relates to shared-(i % K) through /customize.
package main

import (
	"fmt"
	"os"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: loadkit hook|create|edit|trickle|ceiling [flags]")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "hook":
		err = runHook(os.Args[2:])
	case "create", "edit", "trickle", "ceiling":
		err = runWriter(os.Args[1], os.Args[2:])
	default:
		err = fmt.Errorf("unknown command %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "loadkit:", err)
		os.Exit(1)
	}
}
