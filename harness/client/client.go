// Package client is the arena submit client: it uploads a team's
// submission to an event server's API and follows its validation to the
// report. It speaks the API through the wire types of package api alone.
//
// It uses the standard library and package api only, and must never import
// the server's packages (web, event, the sandbox): a team's arena submit
// stays a small HTTP client that runs nothing of the server's.
package client

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"mime/multipart"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/arenabots/arena/harness/api"
)

// Client speaks to an event server's API as a team (or the organizer): it
// uploads submissions and follows their validation.
type Client struct {
	// Server is the event's address, such as https://arena.example.org.
	Server string
	// Token is the team's token, sent as a bearer token.
	Token string
	// HTTP is the client requests go through (nil: http.DefaultClient).
	HTTP *http.Client
}

// Answers larger than these are cut (a report's text is the largest).
const (
	maxJSONAnswer = 4 << 20
	maxTextAnswer = 64 << 20
	maxErrorBody  = 64 << 10
)

func (c *Client) httpClient() *http.Client {
	if c.HTTP != nil {
		return c.HTTP
	}
	return http.DefaultClient
}

func (c *Client) url(path string) string { return strings.TrimRight(c.Server, "/") + path }

// do sends req with the token and returns the answer of a 2xx status; any
// other status is an *api.Error.
func (c *Client) do(req *http.Request) (*http.Response, error) {
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	resp, err := c.httpClient().Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return resp, nil
	}
	defer resp.Body.Close()
	return nil, answerError(resp)
}

// answerError reads the error body of a failed answer.
func answerError(resp *http.Response) *api.Error {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	var wire struct {
		Error *api.Error `json:"error"`
	}
	if json.Unmarshal(body, &wire) == nil && wire.Error != nil && wire.Error.Message != "" {
		wire.Error.Status = resp.StatusCode
		return wire.Error
	}
	// Not the API's answer (a proxy's page, say): the status and the start
	// of the body.
	msg := resp.Status
	if text := strings.TrimSpace(string(bytes.ToValidUTF8(body, []byte("?")))); text != "" {
		if len(text) > 200 {
			text = text[:200] + "..."
		}
		msg += ": " + text
	}
	return &api.Error{Status: resp.StatusCode, Message: "the server answered " + msg}
}

// getJSON decodes the answer of a GET of path into v.
func (c *Client) getJSON(ctx context.Context, path string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.url(path), nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxJSONAnswer)).Decode(v); err != nil {
		return fmt.Errorf("GET %s: the answer is not the API's JSON: %w", path, err)
	}
	return nil
}

// Upload sends a submission: a file as it is, under its base name, or a
// directory as a ZIP of its regular files named after it (NAME.zip). It
// returns the submission as the server stored it, queued for validation.
func (c *Client) Upload(ctx context.Context, path string) (api.Submission, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return api.Submission{}, err
	}
	var content io.Reader
	name := filepath.Base(path)
	if fi.IsDir() {
		abs, err := filepath.Abs(path)
		if err != nil {
			return api.Submission{}, err
		}
		data, err := zipSubmissionDir(abs)
		if err != nil {
			return api.Submission{}, err
		}
		content, name = bytes.NewReader(data), filepath.Base(abs)+".zip"
	} else {
		f, err := os.Open(path)
		if err != nil {
			return api.Submission{}, err
		}
		defer f.Close()
		content = f
	}

	// The form is written as the request is sent.
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	written := make(chan struct{})
	go func() {
		defer close(written)
		part, err := mw.CreateFormFile("file", name)
		if err == nil {
			_, err = io.Copy(part, content)
		}
		if err == nil {
			err = mw.Close()
		}
		pw.CloseWithError(err)
	}()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url("/api/v1/submissions"), pr)
	if err != nil {
		pr.CloseWithError(err)
		<-written
		return api.Submission{}, err
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Accept", "application/json")
	resp, err := c.do(req)
	// A server that answered before reading the whole form reads no more.
	pr.CloseWithError(errors.New("the server answered"))
	<-written
	if err != nil {
		return api.Submission{}, err
	}
	defer resp.Body.Close()
	var answer struct {
		Submission *api.Submission `json:"submission"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxJSONAnswer)).Decode(&answer); err != nil || answer.Submission == nil {
		return api.Submission{}, fmt.Errorf("the server took the upload (%s) but its answer names no submission (%v)", resp.Status, err)
	}
	return *answer.Submission, nil
}

// zipSubmissionDir is a ZIP of the regular files under dir, named by their slash
// paths relative to dir, with their modes (the run bit of an executable
// stays). A symbolic link, or any other file that is not regular, is
// refused: the server would not follow it.
func zipSubmissionDir(dir string) ([]byte, error) {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		switch t := d.Type(); {
		case t&fs.ModeSymlink != 0:
			return fmt.Errorf("%s is a symbolic link: a submission holds only regular files (copy what it points to in its place)", p)
		case !t.IsRegular():
			return fmt.Errorf("%s is not a regular file (%s): a submission holds only regular files", p, t.Type())
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		h, err := zip.FileInfoHeader(fi)
		if err != nil {
			return err
		}
		h.Name, h.Method = filepath.ToSlash(rel), zip.Deflate
		w, err := zw.CreateHeader(h)
		if err != nil {
			return err
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = io.Copy(w, f)
		return err
	})
	if err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Submission is one of the team's submissions as the server has it now.
func (c *Client) Submission(ctx context.Context, id int64) (api.Submission, error) {
	var answer struct {
		Submission *api.Submission `json:"submission"`
	}
	if err := c.getJSON(ctx, fmt.Sprintf("/api/v1/submissions/%d", id), &answer); err != nil {
		return api.Submission{}, err
	}
	if answer.Submission == nil {
		return api.Submission{}, fmt.Errorf("the server's answer about submission %d names no submission", id)
	}
	return *answer.Submission, nil
}

// ReportText is the text of a submission's validation report, as arena
// validate prints it.
func (c *Client) ReportText(ctx context.Context, id int64) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.url(fmt.Sprintf("/api/v1/submissions/%d/report.txt", id)), nil)
	if err != nil {
		return "", err
	}
	req.Header.Set("Accept", "text/plain")
	resp, err := c.do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	text, err := io.ReadAll(io.LimitReader(resp.Body, maxTextAnswer))
	if err != nil {
		return "", fmt.Errorf("read the report of submission %d: %w", id, err)
	}
	return string(text), nil
}

// Polling of Wait: the first interval, doubled up to the last while the
// state does not change; and how long the server may fail to answer before
// Wait gives up.
const (
	pollFirst     = 500 * time.Millisecond
	pollMax       = 5 * time.Second
	unreachableOK = 30 * time.Second
)

// Wait follows a submission until its validation is behind it
// (api.State.Done) and returns it as it ended. progress, when set, is told the
// submission at first and at each change of its state. The server may be
// unreachable, or answer 502, 503 or 504, for a while (a restart queues
// the validations it cut short again); any other error ends the wait.
func (c *Client) Wait(ctx context.Context, id int64, progress func(api.Submission)) (api.Submission, error) {
	last, interval := api.State(""), pollFirst
	var failingSince time.Time
	for {
		sub, err := c.Submission(ctx, id)
		switch {
		case err == nil:
			failingSince = time.Time{}
			if sub.State != last {
				last, interval = sub.State, pollFirst
				if progress != nil {
					progress(sub)
				}
			}
			if sub.State.Done() {
				return sub, nil
			}
		case ctx.Err() != nil:
			return api.Submission{}, ctx.Err()
		case transient(err):
			if failingSince.IsZero() {
				failingSince = time.Now()
			}
			if time.Since(failingSince) > unreachableOK {
				return api.Submission{}, err
			}
		default:
			return api.Submission{}, err
		}
		t := time.NewTimer(interval)
		select {
		case <-ctx.Done():
			t.Stop()
			return api.Submission{}, ctx.Err()
		case <-t.C:
		}
		interval = min(2*interval, pollMax)
	}
}

// transient is an error that a later poll may not meet: the server not
// answering, or a proxy saying it is away.
func transient(err error) bool {
	var ae *api.Error
	if errors.As(err, &ae) {
		return ae.Status == http.StatusBadGateway || ae.Status == http.StatusServiceUnavailable || ae.Status == http.StatusGatewayTimeout
	}
	var unreachable *url.Error
	return errors.As(err, &unreachable)
}
