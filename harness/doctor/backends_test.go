package doctor

// The doctor reaches backends by kind only; its tests check the docker
// backend's, as arena does, which registers it.
import _ "github.com/arenabots/arena/sandbox/docker"
