// XDMF sidecars: the XML that lets ParaView and VisIt open a snapshot, and the series
// (snapshot.hpp).
#include "io/snapshot.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace gridsim {

namespace {

// A file name as XML text: &, <, >, " and ' escaped (an output.prefix may hold any of them).
std::string xml_escaped(const std::string& text) {
    std::string out;
    for (char ch : text) {
        switch (ch) {
            case '&':
                out += "&amp;";
                break;
            case '<':
                out += "&lt;";
                break;
            case '>':
                out += "&gt;";
                break;
            case '"':
                out += "&quot;";
                break;
            case '\'':
                out += "&apos;";
                break;
            default:
                out += ch;
        }
    }
    return out;
}

std::string xdmf_grid(const std::string& h5_name, const Domain& dom, int value_bytes, double time) {
    // Always a 3D co-rectilinear mesh (a 2D grid is one plane thick): ParaView maps XDMF's
    // 2DCoRectMesh onto the y-z plane, a 1 x ny x nx mesh lands in x-y as users expect. The
    // identity function reshapes the [ny][nx] dataset to the mesh's 1 x ny x nx.
    const int nz = dom.dims == 3 ? dom.cells[2] : 1;
    const double dz = dom.dims == 3 ? dom.spacing[2] : 1.0;
    const std::string mesh = fmt::format("{} {} {}", nz, dom.cells[1], dom.cells[0]);
    const std::string data =
        dom.dims == 3 ? mesh : fmt::format("{} {}", dom.cells[1], dom.cells[0]);
    return fmt::format(
        "    <Grid Name=\"u\" GridType=\"Uniform\">\n"
        "      <Time Value=\"{:.17g}\"/>\n"
        "      <Topology TopologyType=\"3DCoRectMesh\" Dimensions=\"{}\"/>\n"
        "      <Geometry GeometryType=\"ORIGIN_DXDYDZ\">\n"
        "        <DataItem Format=\"XML\" NumberType=\"Float\" Precision=\"8\" Dimensions=\"3\">0 "
        "0 0</DataItem>\n"
        "        <DataItem Format=\"XML\" NumberType=\"Float\" Precision=\"8\" "
        "Dimensions=\"3\">{:.17g} {:.17g} {:.17g}</DataItem>\n"
        "      </Geometry>\n"
        "      <Attribute Name=\"u\" AttributeType=\"Scalar\" Center=\"Node\">\n"
        "        <DataItem ItemType=\"Function\" Function=\"$0\" Dimensions=\"{}\">\n"
        "          <DataItem Format=\"HDF\" NumberType=\"Float\" Precision=\"{}\" "
        "Dimensions=\"{}\">{}:/fields/u</DataItem>\n"
        "        </DataItem>\n"
        "      </Attribute>\n"
        "    </Grid>\n",
        time, mesh, dz, dom.spacing[1], dom.spacing[0], mesh, value_bytes, data,
        xml_escaped(h5_name));
}

void write_text_atomically(const std::string& path, const std::string& text) {
    const std::string tmp = path + ".tmp";
    {
        std::ofstream out(tmp, std::ios::trunc);
        out << text;
        out.close();  // a full disk shows at the flush: check after it
        if (!out) {
            const int err = errno;
            std::filesystem::remove(tmp);
            throw std::runtime_error("cannot write " + tmp + ": " + std::strerror(err));
        }
    }
    std::filesystem::rename(tmp, path);
}

}  // namespace

void write_xdmf(const std::string& h5_path, const Domain& dom, int value_bytes, double time) {
    const std::filesystem::path p(h5_path);
    const std::string text = "<?xml version=\"1.0\" ?>\n<Xdmf Version=\"2.0\">\n  <Domain>\n" +
                             xdmf_grid(p.filename().string(), dom, value_bytes, time) +
                             "  </Domain>\n</Xdmf>\n";
    write_text_atomically(std::filesystem::path(h5_path).replace_extension(".xmf").string(), text);
}

void write_xdmf_series(const std::string& series_path, const Domain& dom, int value_bytes,
                       const std::vector<std::pair<std::string, double>>& snapshots) {
    std::string text =
        "<?xml version=\"1.0\" ?>\n<Xdmf Version=\"2.0\">\n  <Domain>\n"
        "  <Grid Name=\"series\" GridType=\"Collection\" CollectionType=\"Temporal\">\n";
    for (const auto& [file, time] : snapshots) {
        text += xdmf_grid(std::filesystem::path(file).filename().string(), dom, value_bytes, time);
    }
    text += "  </Grid>\n  </Domain>\n</Xdmf>\n";
    write_text_atomically(series_path, text);
}

}  // namespace gridsim
