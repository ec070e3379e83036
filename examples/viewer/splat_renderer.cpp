// splat_renderer.cpp — the GL side of splat_renderer.hpp: shaders, buffer textures, the target.
#include "splat_renderer.hpp"

#include <epoxy/gl.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

namespace viewer {
namespace {

// The vertex shader is render_preview's project() (src/tools/preview.cpp) in GLSL, in f32: the
// same camera basis, Jacobian, clamp, dilation and 3σ box. One difference in form, none in
// value: the 2D covariance's determinant is taken as |a0 × a1|² + d (|a0|² + |a1|²) + d² (the
// Lagrange identity for the Gram matrix of the rows a0, a1 of A = J W R S, plus the dilation d),
// which in f32 does not cancel the way Σxx Σyy − Σxy² does for long thin ellipses.
constexpr const char* kVertexShader = R"(#version 330 core
layout(location = 0) in uint splat;  // per instance: the gaussian's index in the frame
uniform samplerBuffer centers;       // R32F, 3 per gaussian
uniform samplerBuffer scales;        // R32F, 3
uniform samplerBuffer rotations;     // RGBA32F, xyzw
uniform samplerBuffer colors;        // RGBA32F, rgb and opacity
uniform usamplerBuffer sh;           // RGBA8UI over the bytes: per gaussian, red's
                                     // coefficients, green's, blue's
uniform int sh_per;                  // coefficients per colour component (0: DC colour only)
uniform vec3 eye, cam_right, cam_up, cam_forward;
uniform float focal, near, dilation, cutoff_sigma;
uniform vec2 principal, limits, image;

flat out vec2 centre_px;
flat out vec3 conic;
flat out vec4 rgba;

vec3 fetch3(samplerBuffer b, int i) {
    return vec3(texelFetch(b, 3 * i).r, texelFetch(b, 3 * i + 1).r, texelFetch(b, 3 * i + 2).r);
}

// The view-dependent colour of bands 1..3 (3D gaussian splatting's real SH basis and sign
// convention, the one the standard PLY's f_rest coefficients are fitted in); a stored byte b is
// the coefficient -4 + 8 b / 255 (§6.5).
vec3 sh_colour(int i, vec3 dir) {
    float x = dir.x, y = dir.y, z = dir.z;
    float xx = x * x, yy = y * y, zz = z * z;
    float basis[15] = float[15](
        -0.4886025119029199 * y, 0.4886025119029199 * z, -0.4886025119029199 * x,
        1.0925484305920792 * x * y, -1.0925484305920792 * y * z,
        0.31539156525252005 * (2.0 * zz - xx - yy), -1.0925484305920792 * x * z,
        0.5462742152960396 * (xx - yy),
        -0.5900435899266435 * y * (3.0 * xx - yy), 2.890611442640554 * x * y * z,
        -0.4570457994644658 * y * (4.0 * zz - xx - yy),
        0.3731763325901154 * z * (2.0 * zz - 3.0 * xx - 3.0 * yy),
        -0.4570457994644658 * x * (4.0 * zz - xx - yy), 1.445305721320277 * z * (xx - yy),
        -0.5900435899266435 * x * (xx - 3.0 * yy));
    vec3 sum = vec3(0.0);
    for (int c = 0; c < 3; ++c)
        for (int k = 0; k < sh_per; ++k) {
            int byte_index = (3 * i + c) * sh_per + k;
            uint b = texelFetch(sh, byte_index >> 2)[byte_index & 3];
            sum[c] += basis[k] * (-4.0 + float(b) * (8.0 / 255.0));
        }
    return sum;
}

void main() {
    // Outside the clip volume: a gaussian that draws nothing.
    gl_Position = vec4(2.0, 2.0, 2.0, 1.0);
    int i = int(splat);
    vec3 d = fetch3(centers, i) - eye;
    float xc = dot(d, cam_right), yc = dot(d, cam_up), zc = dot(d, cam_forward);
    vec4 colour = texelFetch(colors, i);
    if (!(zc > near) || !(colour.a > 0.0)) return;

    // Normalized as fourdgs::normalized() does: a zero or non-finite norm is the identity.
    vec4 q = texelFetch(rotations, i);
    float qn = length(q);
    q = qn > 0.0 && !isinf(qn) && !isnan(qn) ? q / qn : vec4(0.0, 0.0, 0.0, 1.0);
    float x = q.x, y = q.y, z = q.z, w = q.w;
    // The columns of R (GLSL's mat3 is column-major).
    mat3 r = mat3(1.0 - 2.0 * (y * y + z * z), 2.0 * (x * y + w * z), 2.0 * (x * z - w * y),
                  2.0 * (x * y - w * z), 1.0 - 2.0 * (x * x + z * z), 2.0 * (y * z + w * x),
                  2.0 * (x * z + w * y), 2.0 * (y * z - w * x), 1.0 - 2.0 * (x * x + y * y));
    vec3 s = fetch3(scales, i);

    // T = J W: the Jacobian of (cx + f x / z, cy - f y / z), x / z and y / z clamped.
    float tx = clamp(xc / zc, -limits.x, limits.x) * zc;
    float ty = clamp(yc / zc, -limits.y, limits.y) * zc;
    vec3 t0 = (focal / zc) * cam_right - (focal * tx / (zc * zc)) * cam_forward;
    vec3 t1 = -(focal / zc) * cam_up + (focal * ty / (zc * zc)) * cam_forward;
    // The rows of A = T R S; Σ2 = A Aᵀ + dilation.
    vec3 a0 = (t0 * r) * s, a1 = (t1 * r) * s;
    float sxx = dot(a0, a0) + dilation, syy = dot(a1, a1) + dilation, sxy = dot(a0, a1);
    vec3 ax = cross(a0, a1);
    float det = dot(ax, ax) + dilation * (sxx + syy - dilation);
    if (!(det > 0.0) || isinf(det) || isnan(det) || isnan(xc + yc)) return;

    centre_px = principal + vec2(focal * xc / zc, -focal * yc / zc);
    conic = vec3(syy, -sxy, sxx) / det;
    vec2 corner = vec2(float(gl_VertexID & 1), float(gl_VertexID >> 1)) * 2.0 - 1.0;
    vec2 p = centre_px + corner * cutoff_sigma * sqrt(vec2(sxx, syy));
    gl_Position = vec4(2.0 * p.x / image.x - 1.0, 1.0 - 2.0 * p.y / image.y, 0.0, 1.0);

    vec3 rgb = colour.rgb;
    if (sh_per > 0) rgb += sh_colour(i, normalize(d));
    rgba = vec4(clamp(rgb, 0.0, 1.0), min(colour.a, 1.0));
}
)";

// The gaussian at the pixel centre, in render_preview's pixel coordinates (y down); GL's window
// y runs up.
constexpr const char* kFragmentShader = R"(#version 330 core
flat in vec2 centre_px;
flat in vec3 conic;
flat in vec4 rgba;
uniform vec2 image;
uniform float cutoff_sigma;
out vec4 premultiplied;

void main() {
    vec2 d = vec2(gl_FragCoord.x, image.y - gl_FragCoord.y) - centre_px;
    float power = conic.x * d.x * d.x + 2.0 * conic.y * d.x * d.y + conic.z * d.y * d.y;
    if (power > cutoff_sigma * cutoff_sigma) discard;
    float alpha = rgba.a * exp(-0.5 * power);
    premultiplied = vec4(rgba.rgb * alpha, alpha);
}
)";

GLuint compile(GLenum kind, const char* source, std::string& error) {
    const GLuint shader = glCreateShader(kind);
    glShaderSource(shader, 1, &source, nullptr);
    glCompileShader(shader);
    GLint ok = 0;
    glGetShaderiv(shader, GL_COMPILE_STATUS, &ok);
    if (ok) return shader;
    char log[4096] = {};
    glGetShaderInfoLog(shader, sizeof log, nullptr, log);
    error = std::string(kind == GL_VERTEX_SHADER ? "vertex" : "fragment") +
            " shader does not compile: " + log;
    glDeleteShader(shader);
    return 0;
}

// The five columns a Frame hands over, each a buffer seen through a buffer texture.
enum Column { kCenter, kScale, kRotation, kColor, kSh, kColumns };
// SH bytes are read four to a texel, so four times as many fit the buffer texture limit.
constexpr GLenum kColumnFormat[kColumns] = {GL_R32F, GL_R32F, GL_RGBA32F, GL_RGBA32F,
                                            GL_RGBA8UI};
constexpr const char* kColumnSampler[kColumns] = {"centers", "scales", "rotations", "colors",
                                                   "sh"};

}  // namespace

struct SplatRenderer::Gl {
    GLuint program = 0, vao = 0, order_buffer = 0;
    GLuint buffers[kColumns] = {}, textures[kColumns] = {};
    GLuint fbo = 0, target = 0;
    int target_width = 0, target_height = 0;
    GLint max_texels = 0;
    int sh_per = 0;  // of the uploaded frame

    ~Gl() {
        glDeleteProgram(program);
        glDeleteVertexArrays(1, &vao);
        glDeleteBuffers(1, &order_buffer);
        glDeleteBuffers(kColumns, buffers);
        glDeleteTextures(kColumns, textures);
        glDeleteFramebuffers(1, &fbo);
        glDeleteTextures(1, &target);
    }
    GLint uniform(const char* name) const { return glGetUniformLocation(program, name); }

    bool resize_target(int width, int height, std::string& error) {
        if (width == target_width && height == target_height) return true;
        glBindTexture(GL_TEXTURE_2D, target);
        glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA32F, width, height, 0, GL_RGBA, GL_FLOAT, nullptr);
        glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_LINEAR);
        glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_LINEAR);
        glBindFramebuffer(GL_FRAMEBUFFER, fbo);
        glFramebufferTexture2D(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_TEXTURE_2D, target, 0);
        if (glCheckFramebufferStatus(GL_FRAMEBUFFER) != GL_FRAMEBUFFER_COMPLETE) {
            error = "an RGBA32F render target of " + std::to_string(width) + "x" +
                    std::to_string(height) + " is not supported by this OpenGL";
            return false;
        }
        target_width = width;
        target_height = height;
        return true;
    }
};

SplatRenderer::SplatRenderer(std::unique_ptr<Gl> gl) : gl_(std::move(gl)) {}
SplatRenderer::~SplatRenderer() = default;

std::unique_ptr<SplatRenderer> SplatRenderer::create(std::string& error) {
    auto gl = std::make_unique<Gl>();
    const GLuint vs = compile(GL_VERTEX_SHADER, kVertexShader, error);
    if (!vs) return nullptr;
    const GLuint fs = compile(GL_FRAGMENT_SHADER, kFragmentShader, error);
    if (!fs) {
        glDeleteShader(vs);
        return nullptr;
    }
    gl->program = glCreateProgram();
    glAttachShader(gl->program, vs);
    glAttachShader(gl->program, fs);
    glLinkProgram(gl->program);
    glDeleteShader(vs);
    glDeleteShader(fs);
    GLint linked = 0;
    glGetProgramiv(gl->program, GL_LINK_STATUS, &linked);
    if (!linked) {
        char log[4096] = {};
        glGetProgramInfoLog(gl->program, sizeof log, nullptr, log);
        error = std::string("the shaders do not link: ") + log;
        return nullptr;
    }
    glUseProgram(gl->program);
    glGenBuffers(kColumns, gl->buffers);
    glGenTextures(kColumns, gl->textures);
    for (int c = 0; c < kColumns; ++c) {
        // A few bytes, so every texture has a buffer before the first frame arrives.
        glBindBuffer(GL_TEXTURE_BUFFER, gl->buffers[c]);
        glBufferData(GL_TEXTURE_BUFFER, 16, nullptr, GL_STREAM_DRAW);
        glActiveTexture(GL_TEXTURE0 + c);
        glBindTexture(GL_TEXTURE_BUFFER, gl->textures[c]);
        glTexBuffer(GL_TEXTURE_BUFFER, kColumnFormat[c], gl->buffers[c]);
        glUniform1i(gl->uniform(kColumnSampler[c]), c);
    }
    glGetIntegerv(GL_MAX_TEXTURE_BUFFER_SIZE, &gl->max_texels);

    glGenVertexArrays(1, &gl->vao);
    glBindVertexArray(gl->vao);
    glGenBuffers(1, &gl->order_buffer);
    glBindBuffer(GL_ARRAY_BUFFER, gl->order_buffer);
    glEnableVertexAttribArray(0);
    glVertexAttribIPointer(0, 1, GL_UNSIGNED_INT, sizeof(std::uint32_t), nullptr);
    glVertexAttribDivisor(0, 1);

    glGenFramebuffers(1, &gl->fbo);
    glGenTextures(1, &gl->target);
    if (glGetError() != GL_NO_ERROR) {
        error = "OpenGL refused to set up the renderer's buffers";
        return nullptr;
    }
    return std::unique_ptr<SplatRenderer>(new SplatRenderer(std::move(gl)));
}

bool SplatRenderer::upload(const fourdgs::Frame& frame, std::string& error) {
    const std::size_t n = frame.count;
    const int sh_per = frame.sh.size() >= n * 3 * fourdgs::sh_coeffs_per_component(frame.sh_degree)
                           ? fourdgs::sh_coeffs_per_component(frame.sh_degree)
                           : 0;
    const std::size_t sh_bytes = n * 3 * sh_per;
    const std::size_t texels[kColumns] = {n * 3, n * 3, n, n, (sh_bytes + 3) / 4};
    const std::size_t bytes[kColumns] = {n * 3 * 4, n * 3 * 4, n * 16, n * 16, sh_bytes};
    const void* data[kColumns] = {frame.center.data(), frame.scale.data(), frame.rotation.data(),
                                  frame.color.data(), frame.sh.data()};
    for (int c = 0; c < kColumns; ++c)
        if (texels[c] > static_cast<std::size_t>(gl_->max_texels)) {
            error = std::to_string(n) + " gaussians need " + std::to_string(texels[c]) +
                    " texels of " + kColumnSampler[c] + ", over this OpenGL's buffer texture limit " +
                    std::to_string(gl_->max_texels);
            gl_->sh_per = -1;
            return false;
        }
    for (int c = 0; c < kColumns; ++c) {
        glBindBuffer(GL_TEXTURE_BUFFER, gl_->buffers[c]);
        // Orphan the old storage rather than wait for draws still reading it; whole texels.
        const std::size_t storage = std::max<std::size_t>((bytes[c] + 15) / 16 * 16, 16);
        glBufferData(GL_TEXTURE_BUFFER, static_cast<GLsizeiptr>(storage), nullptr,
                     GL_STREAM_DRAW);
        if (bytes[c] > 0)
            glBufferSubData(GL_TEXTURE_BUFFER, 0, static_cast<GLsizeiptr>(bytes[c]), data[c]);
    }
    gl_->sh_per = sh_per;
    return true;
}

void SplatRenderer::draw(const fourdgs::PreviewCamera& cam, std::span<const std::uint32_t> order,
                         int width, int height, const std::array<float, 3>& background) {
    std::string error;
    if (!gl_->resize_target(width, height, error)) return;
    glBindFramebuffer(GL_FRAMEBUFFER, gl_->fbo);
    glViewport(0, 0, width, height);
    glDisable(GL_SCISSOR_TEST);
    glClearColor(background[0], background[1], background[2], 1.0f);
    glClear(GL_COLOR_BUFFER_BIT);
    if (order.empty() || gl_->sh_per < 0) return;

    glUseProgram(gl_->program);
    const auto v3 = [&](const char* name, const fourdgs::Vec3& v) {
        glUniform3f(gl_->uniform(name), static_cast<float>(v[0]), static_cast<float>(v[1]),
                    static_cast<float>(v[2]));
    };
    v3("eye", cam.eye);
    v3("cam_right", cam.right);
    v3("cam_up", cam.up);
    v3("cam_forward", cam.forward);
    glUniform1f(gl_->uniform("focal"), static_cast<float>(cam.focal));
    glUniform1f(gl_->uniform("near"), static_cast<float>(fourdgs::kPreviewNear));
    glUniform1f(gl_->uniform("dilation"), static_cast<float>(fourdgs::kPreviewDilation));
    glUniform1f(gl_->uniform("cutoff_sigma"), static_cast<float>(fourdgs::kPreviewCutoffSigma));
    glUniform2f(gl_->uniform("principal"), static_cast<float>(cam.cx), static_cast<float>(cam.cy));
    glUniform2f(gl_->uniform("limits"),
                static_cast<float>(fourdgs::kPreviewFrustumClamp * cam.tan_half_x),
                static_cast<float>(fourdgs::kPreviewFrustumClamp * cam.tan_half_y));
    glUniform2f(gl_->uniform("image"), static_cast<float>(width), static_cast<float>(height));
    glUniform1i(gl_->uniform("sh_per"), gl_->sh_per);

    glBindVertexArray(gl_->vao);
    glBindBuffer(GL_ARRAY_BUFFER, gl_->order_buffer);
    glBufferData(GL_ARRAY_BUFFER, static_cast<GLsizeiptr>(order.size_bytes()), order.data(),
                 GL_STREAM_DRAW);
    glEnable(GL_BLEND);
    glBlendFunc(GL_ONE, GL_ONE_MINUS_SRC_ALPHA);
    glDrawArraysInstanced(GL_TRIANGLE_STRIP, 0, 4, static_cast<GLsizei>(order.size()));
    glDisable(GL_BLEND);
}

fourdgs::Image SplatRenderer::read_back() const {
    fourdgs::Image image;
    image.width = gl_->target_width;
    image.height = gl_->target_height;
    const std::size_t values = static_cast<std::size_t>(image.width) * image.height * 4;
    std::vector<float> pixels(values);
    glBindFramebuffer(GL_READ_FRAMEBUFFER, gl_->fbo);
    glPixelStorei(GL_PACK_ALIGNMENT, 4);
    glReadPixels(0, 0, image.width, image.height, GL_RGBA, GL_FLOAT, pixels.data());
    image.rgba.resize(values);
    // GL's rows run bottom up; an Image's top down. Channels as render_preview writes them.
    const std::size_t row = static_cast<std::size_t>(image.width) * 4;
    for (int y = 0; y < image.height; ++y)
        for (std::size_t k = 0; k < row; ++k) {
            const float v = pixels[(static_cast<std::size_t>(image.height - 1 - y)) * row + k];
            image.rgba[static_cast<std::size_t>(y) * row + k] =
                k % 4 == 3 ? 255
                           : static_cast<std::uint8_t>(std::lround(std::clamp(v, 0.0f, 1.0f) * 255));
        }
    return image;
}

void SplatRenderer::present(int fb_width, int fb_height, int bar_height, double fraction) {
    glBindFramebuffer(GL_READ_FRAMEBUFFER, gl_->fbo);
    glBindFramebuffer(GL_DRAW_FRAMEBUFFER, 0);
    glViewport(0, 0, fb_width, fb_height);
    glBlitFramebuffer(0, 0, gl_->target_width, gl_->target_height, 0, 0, fb_width, fb_height,
                      GL_COLOR_BUFFER_BIT, GL_LINEAR);
    // The scrubber: two scissored clears, the track and the part played.
    glBindFramebuffer(GL_FRAMEBUFFER, 0);
    glEnable(GL_SCISSOR_TEST);
    glScissor(0, 0, fb_width, bar_height);
    glClearColor(0.15f, 0.15f, 0.15f, 1.0f);
    glClear(GL_COLOR_BUFFER_BIT);
    const int filled = static_cast<int>(std::lround(std::clamp(fraction, 0.0, 1.0) * fb_width));
    if (filled > 0) {
        glScissor(0, bar_height / 4, filled, bar_height / 2);
        glClearColor(0.2f, 0.45f, 0.8f, 1.0f);
        glClear(GL_COLOR_BUFFER_BIT);
    }
    glDisable(GL_SCISSOR_TEST);
}

}  // namespace viewer
