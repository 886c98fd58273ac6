// pbenc turns Pods from JSON into kube-apiserver's protobuf encoding for tests/apisim, the API
// simulator (test infrastructure, never part of the product). The simulator keeps one pbenc
// process running and serves `Accept: application/vnd.kubernetes.protobuf` Pod LISTs from the
// bytes it returns (tests/apisim/simprotobuf.py builds the list envelope around them).
//
// Default mode, a stream of frames:
//
//	stdin:  4-byte big-endian length, then one Pod as JSON; repeated
//	stdout: 1 status byte (0 ok, 1 error), 4-byte big-endian length, then the Pod's
//	        protobuf bytes (corev1.Pod.Marshal, as the items of a PodList carry them)
//	        or the error text; one reply per frame, in order
//
// The JSON is decoded as kube-apiserver decodes JSON (k8s.io/apimachinery/pkg/util/json:
// case-sensitive field names, integers kept as integers), one worker per CPU; replies keep the
// frames' order and are flushed whenever none is pending, so a batch is answered in large
// writes and a single frame at once.
//
// --list: reads one PodList or NodeList (by its kind; PodList when it has none) as JSON on
// stdin and writes what kube-apiserver's protobuf serializer
// (k8s.io/apimachinery/pkg/runtime/serializer/protobuf) sends for it: "k8s\x00" and a
// runtime.Unknown {typeMeta v1/PodList, raw = the list}. It encodes the list with
// both the streaming collection encoder (kube-apiserver's default) and the one-piece encoder
// and fails if the two differ. Tests compare the simulator's pages with it byte for byte.
//
// --version prints the checksum of the sources it was built from (set by build.sh).
package main

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	goruntime "runtime"
	"runtime/debug"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/apimachinery/pkg/util/json"
)

// source is the checksum of the .go files, set at link time by build.sh.
var source = "unknown"

const maxFrame = 64 << 20

func main() {
	switch {
	case len(os.Args) == 1:
		if err := stream(os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "pbenc:", err)
			os.Exit(1)
		}
	case len(os.Args) == 2 && os.Args[1] == "--list":
		if err := list(os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "pbenc --list:", err)
			os.Exit(1)
		}
	case len(os.Args) == 2 && os.Args[1] == "--version":
		fmt.Println("pbenc", source)
	default:
		fmt.Fprintln(os.Stderr, "usage: pbenc [--list | --version]  (frames on stdin, see the source)")
		os.Exit(2)
	}
}

// stream answers frames in order; the Pods are decoded and encoded by one worker per CPU (JSON
// decoding is nearly all of the time: about 50 MB/s on one CPU).
func stream(in io.Reader, out io.Writer) error {
	type job struct {
		data  []byte
		reply chan []byte // status, length, payload
	}
	workers := goruntime.GOMAXPROCS(0)
	debug.SetGCPercent(400) // a Pod's garbage is small and short-lived: fewer collections, ~10% faster
	jobs := make(chan *job, 4*workers)
	order := make(chan *job, 4*workers)
	for i := 0; i < workers; i++ {
		go func() {
			for j := range jobs {
				j.reply <- reply(j.data)
			}
		}()
	}
	readErr := make(chan error, 1)
	go func() {
		defer close(order)
		defer close(jobs)
		r := bufio.NewReaderSize(in, 1<<20)
		var hdr [4]byte
		for {
			if _, err := io.ReadFull(r, hdr[:]); err != nil {
				if err != io.EOF {
					readErr <- fmt.Errorf("reading a frame header: %w", err)
				}
				return
			}
			n := binary.BigEndian.Uint32(hdr[:])
			if n > maxFrame {
				readErr <- fmt.Errorf("a frame of %d bytes (at most %d)", n, maxFrame)
				return
			}
			j := &job{data: make([]byte, n), reply: make(chan []byte, 1)}
			if _, err := io.ReadFull(r, j.data); err != nil {
				readErr <- fmt.Errorf("reading a frame of %d bytes: %w", n, err)
				return
			}
			order <- j
			jobs <- j
		}
	}()
	w := bufio.NewWriterSize(out, 1<<20)
	for j := range order {
		if _, err := w.Write(<-j.reply); err != nil {
			return err
		}
		// flush when no reply is pending: a batch goes out in large writes, a lone frame at once
		if len(order) == 0 {
			if err := w.Flush(); err != nil {
				return err
			}
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	select {
	case err := <-readErr:
		return err
	default:
		return nil
	}
}

func reply(data []byte) []byte {
	payload, err := encodePod(data)
	status := byte(0)
	if err != nil {
		status, payload = 1, []byte(err.Error())
	}
	out := make([]byte, 5+len(payload))
	out[0] = status
	binary.BigEndian.PutUint32(out[1:5], uint32(len(payload)))
	copy(out[5:], payload)
	return out
}

func encodePod(data []byte) ([]byte, error) {
	var pod corev1.Pod
	if err := json.Unmarshal(data, &pod); err != nil {
		return nil, fmt.Errorf("decoding the Pod's JSON: %w", err)
	}
	b, err := pod.Marshal()
	if err != nil {
		return nil, fmt.Errorf("marshalling the Pod: %w", err)
	}
	return b, nil
}

func list(in io.Reader, out io.Writer) error {
	data, err := io.ReadAll(in)
	if err != nil {
		return err
	}
	var head struct {
		Kind string `json:"kind"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return fmt.Errorf("decoding the list's JSON: %w", err)
	}
	var obj runtime.Object
	switch head.Kind {
	case "PodList", "":
		var pl corev1.PodList
		if err := json.Unmarshal(data, &pl); err != nil {
			return fmt.Errorf("decoding the PodList's JSON: %w", err)
		}
		// kube-apiserver's encoder sets the list's kind before it serializes
		pl.TypeMeta.APIVersion, pl.TypeMeta.Kind = "v1", "PodList"
		obj = &pl
	case "NodeList":
		var nl corev1.NodeList
		if err := json.Unmarshal(data, &nl); err != nil {
			return fmt.Errorf("decoding the NodeList's JSON: %w", err)
		}
		nl.TypeMeta.APIVersion, nl.TypeMeta.Kind = "v1", "NodeList"
		obj = &nl
	default:
		return fmt.Errorf("kind %q: expected PodList or NodeList", head.Kind)
	}
	scheme := runtime.NewScheme()
	if err := corev1.AddToScheme(scheme); err != nil {
		return err
	}
	var streamed, whole bytes.Buffer
	s := protobuf.NewSerializerWithOptions(scheme, scheme, protobuf.SerializerOptions{StreamingCollectionsEncoding: true})
	if err := s.Encode(obj, &streamed); err != nil {
		return fmt.Errorf("streaming encoder: %w", err)
	}
	if err := protobuf.NewSerializer(scheme, scheme).Encode(obj, &whole); err != nil {
		return fmt.Errorf("one-piece encoder: %w", err)
	}
	if !bytes.Equal(streamed.Bytes(), whole.Bytes()) {
		return fmt.Errorf("the streaming encoder wrote %d bytes, the one-piece encoder %d, not the same",
			streamed.Len(), whole.Len())
	}
	_, err = out.Write(streamed.Bytes())
	return err
}
