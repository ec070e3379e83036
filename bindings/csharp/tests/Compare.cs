// The comparison of python/tests/test_conformance.py: every key of the expected document must be
// in the binding's with an equal value; numbers are parsed into the type the binding gives them
// (float32 from its spelling, double, integer) and compared for equality, not within a
// tolerance; lists of gaussians compare as sorted multisets.
using System;
using System.Collections.Generic;
using System.Globalization;
using System.Linq;
using System.Text;

namespace Fourdgs.Tests
{
    using D = Dictionary<string, object>;
    using L = List<object>;

    static class Compare
    {
        static readonly CultureInfo Inv = CultureInfo.InvariantCulture;
        static readonly HashSet<string> IntegerKeys =
            new HashSet<string> { "window_index", "flags", "object_id", "gaussian_id", "source" };

        /// <summary>The float32 a decimal spelling stands for (through its float64: exact except
        /// on a float32 midpoint, which a shortest float32 spelling does not produce).</summary>
        public static float F32(string spelling)
        {
            return (float)double.Parse(spelling, NumberStyles.Float, Inv);
        }

        static bool IsInteger(object v)
        {
            return v is long || v is ulong || v is int || v is uint;
        }

        static bool SameNumber(object got, object want)
        {
            if (got is bool || got == null) return false;
            string w = want is Num ? ((Num)want).Spelling : want as string;
            if (w == null) return false;
            if (!(want is Num))  // "inf", "-inf", "nan", or an integer above 2^53
            {
                if (IsInteger(got)) return Convert.ToString(got, Inv) == w;
                double g = Convert.ToDouble(got, Inv);
                return (w == "nan" && double.IsNaN(g)) ||
                       (double.IsInfinity(g) && w == (g > 0 ? "inf" : "-inf"));
            }
            if (IsInteger(got))
            {
                decimal d;
                return decimal.TryParse(w, NumberStyles.Float, Inv, out d) &&
                       d == Convert.ToDecimal(got, Inv);
            }
            if (got is float) return (float)got == F32(w);
            return got is double && (double)got == double.Parse(w, NumberStyles.Float, Inv);
        }

        static bool IsGaussianList(L items)
        {
            var first = items.Count > 0 ? items[0] as D : null;
            return first != null && (first.ContainsKey("mu_t") || first.ContainsKey("center"));
        }

        /// <summary>A typed value's key for the multiset order: floats by their bits (-0 as 0),
        /// integers in decimal.</summary>
        static void Key(StringBuilder s, object v)
        {
            if (v == null) s.Append("null");
            else if (v is L)
            {
                s.Append('[');
                foreach (var x in (L)v) { Key(s, x); s.Append(','); }
                s.Append(']');
            }
            else if (v is float) s.Append("f").Append(BitConverter.ToInt32(BitConverter.GetBytes((float)v + 0f), 0));
            else if (IsInteger(v)) s.Append("i").Append(Convert.ToString(v, Inv));
            else if (v is string) s.Append("s").Append((string)v);
            else if (v is bool) s.Append((bool)v ? "true" : "false");
            else throw new Exception("unexpected " + v.GetType());
        }

        static string ItemKey(D item)
        {
            var s = new StringBuilder();
            foreach (var k in item.Keys.OrderBy(k => k, StringComparer.Ordinal))
            {
                s.Append(k).Append('=');
                Key(s, item[k]);
                s.Append(';');
            }
            return s.ToString();
        }

        /// <summary>An expected gaussian with its numbers in their types (integers for the
        /// integer keys, float32 for the rest).</summary>
        static D Typed(D item)
        {
            var d = new D();
            foreach (var p in item) d[p.Key] = TypedValue(p.Value, IntegerKeys.Contains(p.Key));
            return d;
        }

        static object TypedValue(object v, bool integer)
        {
            if (v is L) return ((L)v).Select(x => TypedValue(x, integer)).ToList();
            if (v is Num) return integer ? (object)long.Parse(((Num)v).Spelling, Inv) : F32(((Num)v).Spelling);
            return v;
        }

        /// <summary>Null when equal, else where and how `got` differs from `want`.</summary>
        public static string Diff(object got, object want, string where = "")
        {
            if (want is D)
            {
                var g = got as D;
                if (g == null) return where + ": got " + Show(got);
                foreach (var p in (D)want)
                {
                    if (!g.ContainsKey(p.Key)) return where + "." + p.Key + " missing";
                    string d = Diff(g[p.Key], p.Value, where + "." + p.Key);
                    if (d != null) return d;
                }
                return null;
            }
            if (want is L)
            {
                var w = (L)want;
                var g = got as L;
                if (g == null || g.Count != w.Count)
                    return where + ": " + (g == null ? Show(got) : g.Count + " items") + ", " + w.Count + " expected";
                if (IsGaussianList(w))
                {
                    var mine = g.Select(x => ItemKey((D)x)).OrderBy(k => k, StringComparer.Ordinal).ToList();
                    var theirs = w.Select(x => ItemKey(Typed((D)x))).OrderBy(k => k, StringComparer.Ordinal).ToList();
                    for (int k = 0; k < mine.Count; k++)
                        if (mine[k] != theirs[k])
                            return where + " (sorted) [" + k + "] differs:\n got  " + mine[k] + "\n want " + theirs[k];
                    return null;
                }
                for (int k = 0; k < w.Count; k++)
                {
                    string d = Diff(g[k], w[k], where + "[" + k + "]");
                    if (d != null) return d;
                }
                return null;
            }
            if (want is Num || (want is string && !(got is string)))
                return SameNumber(got, want) ? null : where + ": got " + Show(got) + ", want " + want;
            if (want == null) return got == null ? null : where + ": got " + Show(got) + ", want null";
            return Equals(got, want) ? null : where + ": got " + Show(got) + ", want " + Show(want);
        }

        static string Show(object v)
        {
            if (v == null) return "null";
            if (v is float) return ((float)v).ToString("R", Inv) + "f";
            if (v is double) return ((double)v).ToString("R", Inv);
            return v.ToString();
        }

        /// <summary>`want` less what the binding does not expose on `path`, as the Python test:
        /// on the indexed path a gaussian-birth chunk's object_id_stream (the index does not say),
        /// and a visible gaussian whose centre or rotation is beyond float32 has no row (it is
        /// counted in unrepresentable).</summary>
        public static D WithoutUnexposed(D want, bool streamed)
        {
            var w = new D(want);
            if (!streamed && (string)w["model"] == "gaussian-birth")
                w["chunks"] = ((L)w["chunks"]).Select(c => (object)((D)c).Where(p => p.Key != "object_id_stream")
                                                              .ToDictionary(p => p.Key, p => p.Value)).ToList();
            w["instants"] = ((L)w["instants"]).Select(x =>
            {
                var i = (D)x;
                var visible = ((L)i["visible"]).Cast<D>().ToList();
                var fits = visible.Where(Fits).Select(v => (object)v).ToList();
                return (object)new D { {"t", i["t"]}, {"visible", fits},
                                       {"unrepresentable", new Num((visible.Count - fits.Count).ToString(Inv))} };
            }).ToList();
            return w;
        }

        static bool Fits(D item)
        {
            return ((L)item["center"]).Concat((L)item["rotation"]).All(v =>
                !(v is Num) || IsFinite(F32(((Num)v).Spelling)));
        }

        static bool IsFinite(float f) { return !float.IsInfinity(f) && !float.IsNaN(f); }
    }
}
