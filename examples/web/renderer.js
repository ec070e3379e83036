// WebGL2 splatting of a fourdgs frame, with the projection of the library's CPU preview
// (src/tools/preview.cpp, render_preview) and of the native viewer: a look-at pinhole camera
// (world up +y, +z when looking along y; square pixels; focal = height / 2 / tan(fov / 2)), each
// gaussian's 3D covariance R S Sᵀ Rᵀ projected with the EWA Jacobian (x/z and y/z clamped to
// 1.3 × the half-frustum), + 0.3 px² on the diagonal, cut at 3σ, alpha = opacity · exp(-½ dᵀΣ⁻¹d),
// DC colour clamped to [0, 1], drawn back to front (the order comes from sort-worker.js) with
// "over" blending. Blending runs in a half-float target when the GPU offers one (so 8-bit
// rounding does not pile up over many layers), then the picture is copied to the canvas.

const TEXELS_PER_GAUSSIAN = 4;  // centre, scale, rotation, colour: one RGBA32F texel each
const DATA_WIDTH = 4096;        // texels per row of the data texture (a multiple of 4)

const SPLAT_VS = `#version 300 es
precision highp float;
precision highp int;
precision highp sampler2D;
uniform sampler2D u_data;
uniform vec3 u_eye, u_right, u_up, u_forward;
uniform float u_focal, u_tan_x, u_tan_y;
uniform vec2 u_size;
layout(location = 0) in uint a_index;
flat out vec2 v_centre;
flat out vec3 v_conic;
flat out vec4 v_colour;
const vec2 kCorners[4] = vec2[4](vec2(-1, -1), vec2(1, -1), vec2(-1, 1), vec2(1, 1));
void main() {
  int base = int(a_index) * ${TEXELS_PER_GAUSSIAN};
  ivec2 at = ivec2(base % ${DATA_WIDTH}, base / ${DATA_WIDTH});
  vec3 c = texelFetch(u_data, at, 0).xyz;
  vec3 s = texelFetch(u_data, at + ivec2(1, 0), 0).xyz;
  vec4 q = texelFetch(u_data, at + ivec2(2, 0), 0);
  vec4 col = texelFetch(u_data, at + ivec2(3, 0), 0);
  gl_Position = vec4(2.0, 2.0, 2.0, 1.0);  // outside the clip volume: draws nothing
  vec3 d = c - u_eye;
  float xc = dot(d, u_right), yc = dot(d, u_up), zc = dot(d, u_forward);
  if (!(zc > 0.01) || !(col.a > 0.0)) return;
  q = normalize(q);
  float x = q.x, y = q.y, z = q.z, w = q.w;
  // Columns of R (R[row][col] as in preview.cpp), each scaled by s[col]: M = R S.
  vec3 m0 = vec3(1.0 - 2.0 * (y * y + z * z), 2.0 * (x * y + w * z), 2.0 * (x * z - w * y)) * s.x;
  vec3 m1 = vec3(2.0 * (x * y - w * z), 1.0 - 2.0 * (x * x + z * z), 2.0 * (y * z + w * x)) * s.y;
  vec3 m2 = vec3(2.0 * (x * z + w * y), 2.0 * (y * z - w * x), 1.0 - 2.0 * (x * x + y * y)) * s.z;
  float lim_x = 1.3 * u_tan_x, lim_y = 1.3 * u_tan_y;
  float tx = clamp(xc / zc, -lim_x, lim_x) * zc, ty = clamp(yc / zc, -lim_y, lim_y) * zc;
  float f = u_focal;
  vec3 t0 = (f / zc) * u_right + (-f * tx / (zc * zc)) * u_forward;
  vec3 t1 = (-f / zc) * u_up + (f * ty / (zc * zc)) * u_forward;
  vec3 a0 = vec3(dot(t0, m0), dot(t0, m1), dot(t0, m2));
  vec3 a1 = vec3(dot(t1, m0), dot(t1, m1), dot(t1, m2));
  float sxx = dot(a0, a0) + 0.3, sxy = dot(a0, a1), syy = dot(a1, a1) + 0.3;
  float det = sxx * syy - sxy * sxy;
  if (!(det > 0.0)) return;
  vec2 centre = vec2(0.5 * u_size.x + f * xc / zc, 0.5 * u_size.y - f * yc / zc);
  vec2 half_box = 3.0 * sqrt(vec2(sxx, syy));
  vec2 pixel = centre + kCorners[gl_VertexID] * half_box;  // image coordinates, y down
  gl_Position = vec4(pixel.x / u_size.x * 2.0 - 1.0, 1.0 - pixel.y / u_size.y * 2.0, 0.0, 1.0);
  v_centre = centre;
  v_conic = vec3(syy, -sxy, sxx) / det;
  v_colour = vec4(clamp(col.rgb, 0.0, 1.0), min(col.a, 1.0));
}`;

const SPLAT_FS = `#version 300 es
precision highp float;
uniform vec2 u_size;
flat in vec2 v_centre;
flat in vec3 v_conic;
flat in vec4 v_colour;
out vec4 o_colour;
void main() {
  vec2 d = vec2(gl_FragCoord.x, u_size.y - gl_FragCoord.y) - v_centre;  // pixel centre, y down
  float power = v_conic.x * d.x * d.x + 2.0 * v_conic.y * d.x * d.y + v_conic.z * d.y * d.y;
  if (power > 9.0) discard;
  o_colour = vec4(v_colour.rgb, v_colour.a * exp(-0.5 * power));
}`;

const PRESENT_VS = `#version 300 es
void main() {
  vec2 p = vec2(gl_VertexID == 1 ? 3.0 : -1.0, gl_VertexID == 2 ? 3.0 : -1.0);
  gl_Position = vec4(p, 0.0, 1.0);
}`;
const PRESENT_FS = `#version 300 es
precision highp float;
uniform sampler2D u_picture;
out vec4 o_colour;
void main() { o_colour = vec4(texelFetch(u_picture, ivec2(gl_FragCoord.xy), 0).rgb, 1.0); }`;

function compile(gl, vs, fs) {
  const program = gl.createProgram();
  for (const [type, text] of [[gl.VERTEX_SHADER, vs], [gl.FRAGMENT_SHADER, fs]]) {
    const shader = gl.createShader(type);
    gl.shaderSource(shader, text);
    gl.compileShader(shader);
    if (!gl.getShaderParameter(shader, gl.COMPILE_STATUS))
      throw new Error(`shader: ${gl.getShaderInfoLog(shader)}`);
    gl.attachShader(program, shader);
  }
  gl.linkProgram(program);
  if (!gl.getProgramParameter(program, gl.LINK_STATUS))
    throw new Error(`program: ${gl.getProgramInfoLog(program)}`);
  return program;
}

/** The look-at camera of preview.cpp's make_camera. */
export function pinhole({ position, target, fovYDeg }, width, height) {
  const sub = (a, b) => [a[0] - b[0], a[1] - b[1], a[2] - b[2]];
  const cross = (a, b) => [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]];
  const unit = (v) => { const n = Math.hypot(...v); return v.map((x) => x / n); };
  const forward = unit(sub(target, position));
  const worldUp = Math.abs(forward[1]) > 1 - 1e-9 ? [0, 0, 1] : [0, 1, 0];
  const right = unit(cross(forward, worldUp));
  const up = cross(right, forward);
  const tanY = Math.tan(fovYDeg * Math.PI / 360);
  const focal = 0.5 * height / tanY;
  return { eye: position, right, up, forward, focal, tanX: 0.5 * width / focal, tanY };
}

export class SplatRenderer {
  constructor(canvas) {
    const gl = canvas.getContext('webgl2', { antialias: false, alpha: false, depth: false,
      preserveDrawingBuffer: true });
    if (!gl) throw new Error('this browser has no WebGL2');
    this.gl = gl;
    this.canvas = canvas;
    this.splat = compile(gl, SPLAT_VS, SPLAT_FS);
    this.present = compile(gl, PRESENT_VS, PRESENT_FS);
    this.float = !!gl.getExtension('EXT_color_buffer_float');
    this.data = gl.createTexture();
    this.capacity = 0;
    this.staging = new Float32Array(0);
    this.order = gl.createBuffer();
    this.vao = gl.createVertexArray();
    gl.bindVertexArray(this.vao);
    gl.bindBuffer(gl.ARRAY_BUFFER, this.order);
    gl.enableVertexAttribArray(0);
    gl.vertexAttribIPointer(0, 1, gl.UNSIGNED_INT, 0, 0);
    gl.vertexAttribDivisor(0, 1);
    gl.bindVertexArray(null);
    this.uniforms = Object.fromEntries(['u_data', 'u_eye', 'u_right', 'u_up', 'u_forward',
      'u_focal', 'u_tan_x', 'u_tan_y', 'u_size'].map((n) => [n, gl.getUniformLocation(this.splat, n)]));
    this.target = null;
    this.count = 0;
  }

  // The blending target: a half-float texture of the canvas's size (or the canvas itself).
  ensureTarget() {
    const gl = this.gl, { width, height } = this.canvas;
    if (!this.float || (this.target && this.target.width === width && this.target.height === height)) return;
    if (this.target) { gl.deleteTexture(this.target.texture); gl.deleteFramebuffer(this.target.fbo); }
    const texture = gl.createTexture();
    gl.bindTexture(gl.TEXTURE_2D, texture);
    gl.texStorage2D(gl.TEXTURE_2D, 1, gl.RGBA16F, width, height);
    const fbo = gl.createFramebuffer();
    gl.bindFramebuffer(gl.FRAMEBUFFER, fbo);
    gl.framebufferTexture2D(gl.FRAMEBUFFER, gl.COLOR_ATTACHMENT0, gl.TEXTURE_2D, texture, 0);
    if (gl.checkFramebufferStatus(gl.FRAMEBUFFER) !== gl.FRAMEBUFFER_COMPLETE) {
      this.float = false;
      gl.deleteTexture(texture);
      gl.deleteFramebuffer(fbo);
      this.target = null;
    } else this.target = { texture, fbo, width, height };
    gl.bindFramebuffer(gl.FRAMEBUFFER, null);
  }

  /** Copies the frame's columns to the GPU (call while the frame's views are valid). */
  upload(frame) {
    const gl = this.gl, n = frame.count;
    const rows = Math.max(1, Math.ceil(n * TEXELS_PER_GAUSSIAN / DATA_WIDTH));
    if (rows * DATA_WIDTH * 4 > this.staging.length) {
      this.staging = new Float32Array(rows * DATA_WIDTH * 4);
      gl.bindTexture(gl.TEXTURE_2D, this.data);
      gl.texImage2D(gl.TEXTURE_2D, 0, gl.RGBA32F, DATA_WIDTH, rows, 0, gl.RGBA, gl.FLOAT, null);
      gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_MIN_FILTER, gl.NEAREST);
      gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_MAG_FILTER, gl.NEAREST);
      this.rows = rows;
    }
    const s = this.staging, { center, scale, rotation, color } = frame;
    for (let i = 0; i < n; ++i) {
      const o = 16 * i;
      s[o] = center[3 * i]; s[o + 1] = center[3 * i + 1]; s[o + 2] = center[3 * i + 2];
      s[o + 4] = scale[3 * i]; s[o + 5] = scale[3 * i + 1]; s[o + 6] = scale[3 * i + 2];
      s[o + 8] = rotation[4 * i]; s[o + 9] = rotation[4 * i + 1];
      s[o + 10] = rotation[4 * i + 2]; s[o + 11] = rotation[4 * i + 3];
      s[o + 12] = color[4 * i]; s[o + 13] = color[4 * i + 1];
      s[o + 14] = color[4 * i + 2]; s[o + 15] = color[4 * i + 3];
    }
    gl.bindTexture(gl.TEXTURE_2D, this.data);
    gl.texSubImage2D(gl.TEXTURE_2D, 0, 0, 0, DATA_WIDTH, Math.ceil(n * TEXELS_PER_GAUSSIAN / DATA_WIDTH) || 1,
      gl.RGBA, gl.FLOAT, s);
    this.count = n;
  }

  /** Draws the uploaded frame in `order` (back to front) through `view` over `background`. */
  draw(order, view, background = [0, 0, 0]) {
    const gl = this.gl, { width, height } = this.canvas;
    this.ensureTarget();
    const cam = pinhole(view, width, height);
    gl.bindFramebuffer(gl.FRAMEBUFFER, this.target ? this.target.fbo : null);
    gl.viewport(0, 0, width, height);
    gl.clearColor(background[0], background[1], background[2], 1);
    gl.clear(gl.COLOR_BUFFER_BIT);
    if (order.length) {
      gl.useProgram(this.splat);
      const u = this.uniforms;
      gl.uniform1i(u.u_data, 0);
      gl.uniform3fv(u.u_eye, cam.eye);
      gl.uniform3fv(u.u_right, cam.right);
      gl.uniform3fv(u.u_up, cam.up);
      gl.uniform3fv(u.u_forward, cam.forward);
      gl.uniform1f(u.u_focal, cam.focal);
      gl.uniform1f(u.u_tan_x, cam.tanX);
      gl.uniform1f(u.u_tan_y, cam.tanY);
      gl.uniform2f(u.u_size, width, height);
      gl.activeTexture(gl.TEXTURE0);
      gl.bindTexture(gl.TEXTURE_2D, this.data);
      gl.bindBuffer(gl.ARRAY_BUFFER, this.order);
      gl.bufferData(gl.ARRAY_BUFFER, order, gl.STREAM_DRAW);
      gl.enable(gl.BLEND);
      gl.blendFuncSeparate(gl.SRC_ALPHA, gl.ONE_MINUS_SRC_ALPHA, gl.ONE, gl.ONE_MINUS_SRC_ALPHA);
      gl.bindVertexArray(this.vao);
      gl.drawArraysInstanced(gl.TRIANGLE_STRIP, 0, 4, order.length);
      gl.bindVertexArray(null);
      gl.disable(gl.BLEND);
    }
    if (this.target) {
      gl.bindFramebuffer(gl.FRAMEBUFFER, null);
      gl.useProgram(this.present);
      gl.activeTexture(gl.TEXTURE0);
      gl.bindTexture(gl.TEXTURE_2D, this.target.texture);
      gl.drawArrays(gl.TRIANGLES, 0, 3);
    }
  }
}
