"""Video: MP4 of the view at the simulation clock's rate, written by the ffmpeg binary
that imageio-ffmpeg's wheel bundles (no system ffmpeg is assumed), RGB frames piped in
(FfmpegWriter): its messages are kept out of the terminal unless VERBOSE (the CLI's
--verbose), and a failure raises VideoWriteError with the operating system's reason.

Frame k shows simulated time t0 + k / fps (the first step at or after it): frames are
spaced in simulated time, not wall time, so slow motion, a slow machine and replay
after a rewind all record at the true speed of the physics. A rewind while recording
(time going back) restarts the frame clock from the replayed time, so the video shows
the replay as it is played.

- `SimClockVideo(path, fps)`: `due(t)` says whether the frame for time t is due,
  `add(rgb, t)` appends it (H×W×3 uint8; odd sizes are cropped to even, as H.264's
  4:2:0 needs).
- `record_headless(world, path, duration, ...)`: steps the world and draws each frame
  with the offscreen renderer (render/offscreen.py's EGL context and SceneRenderer).
- The window's record button (ui/panel.py) and `--record-video` with `--frames N`
  record the window's frame: the 3D view, with or without the panel.
"""
import errno
import math
import os
import signal
import subprocess
import tempfile

import numpy as np

DEFAULT_FPS = 30
CRF = 18              # x264 quality (lower is better; 18 is visually lossless)
VERBOSE = False       # ffmpeg's own messages on stderr (the CLI's --verbose)


class VideoWriteError(OSError):
    """Writing the video failed: `strerror` is the operating system's reason ffmpeg gave
    (`No space left on device`, `File too large`, …), `filename` the video's path."""


def os_reason(text):
    """The operating system's error message found in ffmpeg's output (the longest
    strerror text it contains), or its last line; (errno or None, message)."""
    found = [(code, os.strerror(code)) for code in errno.errorcode if os.strerror(code) in text]
    if found:
        return max(found, key=lambda f: len(f[1]))
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    return None, (lines[-1][:200] if lines else "ffmpeg failed")


class FfmpegWriter:
    """An H.264 MP4 written by the ffmpeg binary imageio-ffmpeg bundles, RGB frames piped
    in (started at the first frame, whose size it takes). ffmpeg's messages go to a
    temporary file (to stderr with VERBOSE); a failure raises VideoWriteError."""

    def __init__(self, path, fps):
        self.path, self.fps = str(path), float(fps)
        self.proc = self.log = None

    def _start(self, w, h):
        import imageio_ffmpeg
        cmd = [imageio_ffmpeg.get_ffmpeg_exe(), "-y", "-f", "rawvideo", "-vcodec", "rawvideo", "-s", f"{w}x{h}",
               "-pix_fmt", "rgb24", "-r", f"{self.fps:g}", "-i", "-", "-an", "-vcodec", "libx264",
               "-pix_fmt", "yuv420p", "-crf", str(CRF), "-preset", "veryfast",
               "-v", "info" if VERBOSE else "error", self.path]
        self.log = None if VERBOSE else tempfile.TemporaryFile(mode="w+b")
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                     stderr=None if VERBOSE else self.log, start_new_session=True)

    def append_data(self, frame):
        h, w = frame.shape[:2]
        if self.proc is None:
            self._start(w, h)
        try:
            self.proc.stdin.write(np.ascontiguousarray(frame, np.uint8).tobytes())
        except OSError:                     # ffmpeg stopped (a full disk, …): its reason
            self._fail()

    def _fail(self):
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        self.proc.wait()
        text = ""
        if self.log is not None:
            self.log.seek(0)
            text = self.log.read().decode("utf-8", "replace")
        code, reason = os_reason(text)
        if self.proc.returncode == -signal.SIGXFSZ:    # past the file-size limit: EFBIG
            code, reason = errno.EFBIG, os.strerror(errno.EFBIG)
        elif self.proc.returncode < 0 and code is None:
            reason = f"ffmpeg was stopped by {signal.Signals(-self.proc.returncode).name}"
        self.proc = None
        raise VideoWriteError(code, reason, self.path)

    def close(self):
        """Finish the file; VideoWriteError if ffmpeg could not."""
        if self.proc is None:
            return
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        if self.proc.wait() != 0:
            self._fail()
        self.proc = None
        if self.log is not None:
            self.log.close()


def open_writer(path, fps):
    return FfmpegWriter(path, fps)


class SimClockVideo:
    """An MP4 file taking one frame every 1/fps of simulated time."""

    def __init__(self, path, fps=DEFAULT_FPS):
        self.path = str(path)
        self.fps = float(fps)
        self.writer = open_writer(self.path, self.fps)
        self.t0 = None            # simulated time of frame 0 (of the current run of frames)
        self.k = 0                # the next frame's number since t0
        self.frames = 0           # frames written
        self.size = None          # (width, height) of the video
        self.last_t = None

    def next_time(self):
        return None if self.t0 is None else self.t0 + self.k / self.fps

    def due(self, t):
        """True when the frame for simulated time t should be written now."""
        if self.t0 is None:
            return True
        if self.last_t is not None and t < self.last_t - 1e-12:     # rewound: the clock restarts there
            return True
        return t >= self.next_time() - 1e-9

    def steps_to_next(self, t, dt):
        """Steps of dt from time t to reach (not pass) the next frame's time (0: it is due now)."""
        nt = self.next_time()
        if nt is None or self.due(t):
            return 0                  # this frame first: draw it before stepping on
        return max(1, int(math.ceil((nt - t) / dt - 1e-9)))

    def add(self, rgb, t):
        """Append the frame for simulated time t (call when due(t))."""
        if self.t0 is None or (self.last_t is not None and t < self.last_t - 1e-12):
            self.t0, self.k = t, 0
        h, w = rgb.shape[:2]
        if self.size is None:
            self.size = (w - w % 2, h - h % 2)
        fw, fh = self.size
        frame = np.ascontiguousarray(rgb[:fh, :fw, :3])
        if frame.shape[:2] != (fh, fw):               # the window shrank: pad with black
            pad = np.zeros((fh, fw, 3), np.uint8)
            pad[:frame.shape[0], :frame.shape[1]] = frame
            frame = pad
        self.writer.append_data(frame)
        self.frames += 1
        self.last_t = t
        # the next frame: the first frame time after t (a slow frame skips none; a gap
        # in simulated time, e.g. a jump forward in the timeline, skips the frames in it)
        self.k = max(self.k + 1, int(math.floor((t - self.t0) * self.fps + 1e-6)) + 1)

    def close(self):
        if self.writer is not None:
            self.writer.close()
            self.writer = None


def frame_count(duration, fps=DEFAULT_FPS):
    """Frames of a headless recording of `duration` s: t = k / fps for k / fps < duration."""
    return max(1, int(math.ceil(duration * fps - 1e-9)))


def record_headless(world, path, duration, fps=DEFAULT_FPS, size=(1280, 720), on_step=None):
    """Step `world` for `duration` s (round(duration / dt) steps) writing an MP4 of
    frame_count(duration, fps) frames drawn offscreen, the camera framed on the
    first frame. `on_step()` runs after every step (the CLI's checks and CSV).
    Returns (frames written, camera, (width, height)). Raises SimulationBlowUp."""
    from render.frame import RenderTarget, initial_camera
    from render.offscreen import egl_context
    from render.scene_renderer import SceneRenderer
    ctx = egl_context()
    steps = int(round(duration / world.dt))
    n_frames = frame_count(duration, fps)
    video = SimClockVideo(path, fps)
    t_start = world.time
    try:
        with ctx:
            snap = world.snapshot()
            renderer = SceneRenderer(ctx, snap)
            camera = initial_camera(world, snap, size[0] / size[1])
            target = RenderTarget(ctx, size)
            try:
                done = 0
                while True:
                    if video.frames < n_frames and video.due(world.time):
                        renderer.draw(world.snapshot(), camera, size, target.msaa)
                        target.resolve()
                        video.add(target.pixels(), world.time)
                    if done >= steps:
                        break
                    world.step()
                    done += 1
                    if on_step is not None:
                        on_step()
            finally:
                renderer.release()
    finally:
        video.close()
    assert abs(video.t0 - t_start) < 1e-12 if video.t0 is not None else True
    return video.frames, camera, video.size
