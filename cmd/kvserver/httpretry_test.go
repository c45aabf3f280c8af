package main

import (
	"io"
	"net/http"
	"time"
)

// doRetrying sends the request newReq builds, again while the answer is
// 503 (no leader for the moment: an election), for up to 10 s, as a client
// of the cluster would; it returns the last answer's status and body.
func doRetrying(client *http.Client, newReq func() *http.Request) (int, string, error) {
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, err := client.Do(newReq())
		if err != nil {
			return 0, "", err
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusServiceUnavailable || time.Now().After(deadline) {
			return resp.StatusCode, string(b), nil
		}
		time.Sleep(10 * time.Millisecond)
	}
}
