// Managed copies of the scene's records (strings decoded, arrays copied): read once, at scene
// time, never per frame.
using System.Collections.Generic;
using Fourdgs.Native;

namespace Fourdgs
{
    /// <summary>fourdgs_scene_info with its strings decoded; Raw holds every field.</summary>
    public sealed class SceneInfo
    {
        public Native.SceneInfo Raw;
        public string Profile, Library, TemporalModel, QuantizationScheme, ScanCause;
        public double DurationSec { get { return Raw.duration_sec; } }
        public ulong GaussianCount { get { return Raw.gaussian_count; } }
        public bool KeyframeDelta { get { return Raw.temporal_model == 1; } }
    }

    public sealed class Metadata
    {
        public string Name;
        public List<KeyValuePair<string, string>> Entries = new List<KeyValuePair<string, string>>();
    }

    public sealed class Attachment
    {
        public string Name, MediaType;
        public Payload Payload;
    }

    public sealed class CameraKey
    {
        public double Time;
        public double[] Position, Target;
    }

    public sealed class Camera
    {
        public double FovYDeg;
        public double[] Position, Target;
        public string Interpolation;
        public bool Loop;
        public List<CameraKey> Keyframes = new List<CameraKey>();
    }

    public sealed class AudioKey
    {
        public double Time;
        public double[] Position, Rotation;
    }

    public sealed class AudioSource
    {
        public uint SourceId;
        public bool Legacy;
        public string Name, Codec, ChannelLayout, Interpolation;
        public double StartSec, DurationSec, Gain;
        public uint Flags;
        public double[] Position, Rotation;
        public Payload Payload;
        public List<AudioKey> Keyframes = new List<AudioKey>();
    }

    public sealed class CoordinateFrameInfo
    {
        public string Name;
        public uint Handedness, UpAxis, ForwardAxis, LengthUnit;
        public double MetresPerUnit;
    }

    public sealed class SensorInfo
    {
        public string Name, Modality, RigName;
        public uint CameraModel, WidthPx, HeightPx, PoseReference;
        public double Fx, Fy, Cx, Cy;
        public double[] Distortion, Rotation, Translation;
    }

    public sealed class Pose
    {
        public double Time;
        public double[] Rotation, Translation;
    }

    public sealed class RigTrajectory
    {
        public string Name;
        public uint Interpolation;
        public List<Pose> Samples = new List<Pose>();
    }

    public sealed class GeodeticAnchorInfo
    {
        public string FrameName;
        public double LatitudeDeg, LongitudeDeg, AltitudeM, HeadingDeg;
    }

    public sealed class ObjectEntry
    {
        public uint ObjectId;
        public string Label;
        public float[] Anchor;
        /// <summary>Null without dynamics.</summary>
        public float[] Velocity, AngularVelocity, Acceleration;
        /// <summary>Null without an embedding.</summary>
        public float[] Embedding;
    }

    public sealed class ObjectTrack
    {
        public uint ObjectId, Interpolation;
        public List<Pose> Samples = new List<Pose>();
    }

    public sealed class Chunk
    {
        public Native.ChunkInfo Raw;
        /// <summary>The SH band ranges the index names: (band, offset, length).</summary>
        public List<ulong[]> Bands = new List<ulong[]>();
    }

    /// <summary>A range the summary states: a Summary Offset (opcode, start, length) or a skipped
    /// record (opcode, offset, length).</summary>
    public struct RecordRange
    {
        public uint Opcode;
        public ulong Offset, Length;
    }
}
