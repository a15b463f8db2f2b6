package k8s

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// The release workflow publishes the image the manifests name: on a v*
// tag, ImageRepository with the tag as DefaultImage gives it to that
// release's binary, logged in to ghcr.io with the workflow's token, which
// may write packages.
func TestReleaseWorkflowPublishesDefaultImage(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", ".github", "workflows", "release.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var wf struct {
		On struct {
			Push struct {
				Tags []string `json:"tags"`
			} `json:"push"`
		} `json:"on"`
		Permissions map[string]string `json:"permissions"`
		Env         map[string]string `json:"env"`
		Jobs        map[string]struct {
			Steps []struct {
				ID   string            `json:"id"`
				Uses string            `json:"uses"`
				Run  string            `json:"run"`
				With map[string]string `json:"with"`
			} `json:"steps"`
		} `json:"jobs"`
	}
	if err := yaml.Unmarshal(b, &wf); err != nil {
		t.Fatalf("release.yml: %v", err)
	}
	if !slices.Equal(wf.On.Push.Tags, []string{"v*"}) || wf.Permissions["packages"] != "write" || wf.Env["IMAGE"] != ImageRepository {
		t.Fatalf("on %+v permissions %v env %v", wf.On, wf.Permissions, wf.Env)
	}
	job, ok := wf.Jobs["image"]
	if !ok {
		t.Fatalf("no image job: %v", wf.Jobs)
	}
	var login, push, tags bool
	for _, s := range job.Steps {
		switch {
		case strings.HasPrefix(s.Uses, "docker/login-action@"):
			login = s.With["registry"] == "ghcr.io" && s.With["password"] == "${{ secrets.GITHUB_TOKEN }}"
		case strings.HasPrefix(s.Uses, "docker/build-push-action@"):
			push = s.With["push"] == "true" && s.With["tags"] == "${{ steps.tags.outputs.tags }}" &&
				s.With["build-args"] == "VERSION=${{ github.ref_name }}"
		case s.ID == "tags":
			// the tag DefaultImage gives a release binary built with
			// VERSION set to the git tag
			tags = strings.Contains(s.Run, `tags="$IMAGE:$GITHUB_REF_NAME"`) && DefaultImage("v1.2.3") == ImageRepository+":v1.2.3"
		}
	}
	if !login || !push || !tags {
		t.Errorf("login to ghcr.io with GITHUB_TOKEN %v, build and push the tags %v, the release's tag %v", login, push, tags)
	}
}
