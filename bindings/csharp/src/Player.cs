// Playback on the caller's clock (fourdgs_player_*, docs/playback.md). Frame(now) is the render
// thread's call: it evaluates what is resident into a reused Frame, never waits on the source
// when the data arrived in time, and allocates nothing.
using System;
using Fourdgs.Native;

namespace Fourdgs
{
    public enum PlaybackState { Paused = 0, Playing = 1, Ended = 2 }

    /// <summary>Why a frame is late (fourdgs_late_reason).</summary>
    public enum LateReason { None = 0, Starting = 1, Queued = 2, Fetching = 3, Decoding = 4 }

    /// <summary>What a frame call says beside its frame (a struct: no allocation).</summary>
    public struct PlayerFrameResult
    {
        public Native.PlayerFrameInfo Raw;
        /// <summary>The instant asked for: the clock's at `now`, or FrameAt's t.</summary>
        public double Time { get { return Raw.time; } }
        /// <summary>The instant the frame was evaluated at (late: the nearest one the state shown covers).</summary>
        public double Shown { get { return Raw.shown; } }
        public bool Late { get { return Raw.late != 0; } }
        public LateReason Reason { get { return (LateReason)Raw.reason; } }
        public PlaybackState State { get { return (PlaybackState)Raw.state; } }
        public int AudioCount { get { return (int)(ulong)Raw.audio_count; } }
    }

    public sealed class Player : IDisposable
    {
        readonly PlayerHandle handle = new PlayerHandle();
        readonly Reader reader; // the player reads it on its worker thread: keep it alive

        /// <summary>Plays `reader` (which must not be disposed before the player).</summary>
        public Player(Reader reader, PlayerSettings settings = null)
        {
            this.reader = reader;
            var o = (settings ?? new PlayerSettings()).ToNative();
            IntPtr h;
            Lib.Check(Api.fourdgs_player_create(reader.Handle, ref o, out h));
            handle.Set(h);
        }

        /// <summary>Stops the worker and frees the player.</summary>
        public void Dispose() { handle.Dispose(); }

        /// <summary>The frame at the clock's time for `now` (seconds, any origin) into `frame`.
        /// With `wait` it blocks until the state is resident instead of returning a late frame.</summary>
        public PlayerFrameResult Frame(double now, Frame frame, bool wait = false)
        {
            var r = new PlayerFrameResult();
            r.Raw.struct_size = Lib.Size<Native.PlayerFrameInfo>();
            Lib.Check(Api.fourdgs_player_frame(handle, now, wait ? 1u : 0u, frame.Handle, ref r.Raw));
            return r;
        }

        /// <summary>The frame at scene time t, which becomes the playhead.</summary>
        public PlayerFrameResult FrameAt(double t, Frame frame, bool wait = false)
        {
            var r = new PlayerFrameResult();
            r.Raw.struct_size = Lib.Size<Native.PlayerFrameInfo>();
            Lib.Check(Api.fourdgs_player_frame_at(handle, t, wait ? 1u : 0u, frame.Handle, ref r.Raw));
            return r;
        }

        /// <summary>Audio source `index` at the last frame's time.</summary>
        public AudioState AudioState(int index)
        {
            AudioState s;
            Lib.Check(Api.fourdgs_player_audio_state(handle, (UIntPtr)(uint)index, out s));
            return s;
        }

        public void Play() { Lib.Check(Api.fourdgs_player_play(handle)); }
        public void Pause() { Lib.Check(Api.fourdgs_player_pause(handle)); }
        public void Seek(double t) { Lib.Check(Api.fourdgs_player_seek(handle, t)); }
        public void SetRate(double rate) { Lib.Check(Api.fourdgs_player_set_rate(handle, rate)); }
        public void SetLoop(bool loop) { Lib.Check(Api.fourdgs_player_set_loop(handle, loop ? 1u : 0u)); }

        public PlayerInfo Info
        {
            get
            {
                var i = new PlayerInfo { struct_size = Lib.Size<PlayerInfo>() };
                Lib.Check(Api.fourdgs_player_info_get(handle, ref i));
                return i;
            }
        }

        internal Reader Reader { get { return reader; } }
    }
}
