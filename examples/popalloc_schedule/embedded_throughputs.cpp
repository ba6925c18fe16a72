// SPDX-License-Identifier: MIT
// Isolated throughputs (steps/s, the "null" entries) of Gavel's
// scheduler/simulation_throughputs.json for the GPU types k80, p100 and v100, generated from
// data/gavel/simulation_throughputs.json (co-location and *_unconsolidated entries left out). The
// test "cluster: embedded throughput table equals the JSON file" checks every value against the
// file.
//
// Copyright (c) 2020 Stanford Future Data Systems
// Permission is hereby granted, free of charge, to any person obtaining a copy of this software
// and associated documentation files (the "Software"), to deal in the Software without
// restriction, including without limitation the rights to use, copy, modify, merge, publish,
// distribute, sublicense, and/or sell copies of the Software, and to permit persons to whom the
// Software is furnished to do so, subject to the following conditions: The above copyright notice
// and this permission notice shall be included in all copies or substantial portions of the
// Software. THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR IMPLIED,
// INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY, FITNESS FOR A PARTICULAR PURPOSE
// AND NONINFRINGEMENT. IN NO EVENT SHALL THE AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM,
// DAMAGES OR OTHER LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
// OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE SOFTWARE.
#include "embedded_throughputs.hpp"

namespace popalloc_schedule {

const embedded_row kEmbeddedThroughputs[] = {
    {"A3C", 1, 3.4387678290723933, 5.681346110543853, 7.175767179667988},
    {"CycleGAN", 1, 0.5047705689725351, 2.4026681703106223, 4.426088263367452},
    {"LM (batch size 10)", 1, 23.794428965833195, 77.0846780814848, 81.65163491883021},
    {"LM (batch size 10)", 2, 29.984857868091424, 72.53230564648803, 163.12902048608936},
    {"LM (batch size 10)", 4, 42.95641711924023, 105.18225815357819, 121.4776195889045},
    {"LM (batch size 10)", 8, 75.56769495697503, 127.78891069226745, 615.0934647748222},
    {"LM (batch size 20)", 1, 17.142289692304086, 58.17267240669826, 64.74245099960703},
    {"LM (batch size 20)", 2, 23.773289373427588, 62.33209834747592, 132.17413449742747},
    {"LM (batch size 20)", 4, 35.70344542111913, 93.81478290324394, 110.99685986392635},
    {"LM (batch size 20)", 8, 61.44923706594953, 116.64882298424683, 497.2952582330656},
    {"LM (batch size 40)", 1, 11.49965208600937, 35.76638325549232, 45.23737155222392},
    {"LM (batch size 40)", 2, 16.069669774246478, 48.04183588734964, 91.59265730806288},
    {"LM (batch size 40)", 4, 22.985588987864023, 76.05171457103407, 96.0312451685392},
    {"LM (batch size 40)", 8, 43.14645512121931, 102.24830495094295, 359.30692492331696},
    {"LM (batch size 5)", 1, 25.485501277170847, 90.77591199634988, 109.16661771207029},
    {"LM (batch size 5)", 2, 32.38551179103253, 76.92190129668617, 185.72383101933428},
    {"LM (batch size 5)", 4, 44.08947633248205, 110.21661082949367, 126.71571815404346},
    {"LM (batch size 5)", 8, 76.86310558968589, 133.5240899561302, 698.773292956699},
    {"LM (batch size 80)", 1, 6.054204218128158, 21.157527655800312, 28.239955054085122},
    {"LM (batch size 80)", 2, 10.008340130840935, 31.841192000355488, 58.09153801943523},
    {"LM (batch size 80)", 4, 16.388740436358198, 54.99554190953061, 74.80729601169598},
    {"LM (batch size 80)", 8, 28.28611005020739, 82.93412253724979, 231.17619885320647},
    {"Recommendation (batch size 1024)", 1, 20.04995255198869, 30.74443726150114, 13.2825697082565},
    {"Recommendation (batch size 2048)", 1, 10.441219687328084, 16.59663998583255,
     7.469632060833725},
    {"Recommendation (batch size 4096)", 1, 5.30024719584159, 8.896661974093526,
     3.9060505302376054},
    {"Recommendation (batch size 512)", 1, 32.859303327562166, 48.882390510045944,
     23.317634950657975},
    {"Recommendation (batch size 8192)", 1, 2.698783123478088, 5.548440840558535,
     2.841510364354536},
    {"ResNet-18 (batch size 128)", 1, 1.8065297880422846, 11.675499943575447, 17.994906225052176},
    {"ResNet-18 (batch size 128)", 2, 3.631452370926338, 24.227371898345275, 23.985353059276264},
    {"ResNet-18 (batch size 128)", 4, 6.98169990398197, 45.35074002546124, 69.95051765177759},
    {"ResNet-18 (batch size 128)", 8, 13.663632559853195, 85.0793574120047, 162.09160717942794},
    {"ResNet-18 (batch size 16)", 1, 4.795294551566172, 35.869203207990005, 32.353384328946916},
    {"ResNet-18 (batch size 16)", 2, 8.758230831811566, 60.91063005118197, 100.14206200421837},
    {"ResNet-18 (batch size 16)", 4, 16.121271269107403, 94.32078314001782, 123.85376642692827},
    {"ResNet-18 (batch size 16)", 8, 26.918422115521246, 130.0887520612053, 382.5974422686407},
    {"ResNet-18 (batch size 256)", 1, 0.8855799947494726, 7.72278472419796, 10.300256501360458},
    {"ResNet-18 (batch size 256)", 2, 1.673815653100855, 14.228807697629525, 15.882848624471642},
    {"ResNet-18 (batch size 256)", 4, 3.4051948296210313, 27.729263473363318, 27.7820579015064},
    {"ResNet-18 (batch size 256)", 8, 6.975265819624308, 53.95682972575557, 81.5065873273903},
    {"ResNet-18 (batch size 32)", 1, 7.175820532538584, 35.82535355155143, 29.947157347732464},
    {"ResNet-18 (batch size 32)", 2, 13.180372871036058, 57.51885541851509, 94.24893164660543},
    {"ResNet-18 (batch size 32)", 4, 22.529256735348344, 97.03631932363041, 114.73342037584995},
    {"ResNet-18 (batch size 32)", 8, 43.91928859031286, 141.9954227360289, 340.0383618985821},
    {"ResNet-18 (batch size 64)", 1, 7.052080666695425, 22.30494387033663, 24.093231895382736},
    {"ResNet-18 (batch size 64)", 2, 12.495482346599234, 41.4822445592434, 74.13589143268821},
    {"ResNet-18 (batch size 64)", 4, 21.625568416059814, 74.99057006200313, 95.58814453205626},
    {"ResNet-18 (batch size 64)", 8, 42.64410449114462, 120.03699011475503, 255.82913926317391},
    {"ResNet-50 (batch size 128)", 1, 0.3472236920519382, 1.5843515911819712, 2.4967655780898292},
    {"ResNet-50 (batch size 128)", 2, 0.0, 2.8808978271495276, 4.2230145549692715},
    {"ResNet-50 (batch size 128)", 4, 0.0, 5.1911475091878305, 7.029294087316617},
    {"ResNet-50 (batch size 128)", 8, 0.0, 9.934969604819724, 10.293183147179176},
    {"ResNet-50 (batch size 16)", 1, 2.3005199880283542, 9.052989674171888, 11.396129065315943},
    {"ResNet-50 (batch size 16)", 2, 4.300705880226241, 16.191429630480485, 13.859757680196113},
    {"ResNet-50 (batch size 16)", 4, 7.704099165853955, 30.798442100370274, 23.195585654383645},
    {"ResNet-50 (batch size 16)", 8, 15.056077334896191, 44.762451467168084, 27.799094635512898},
    {"ResNet-50 (batch size 32)", 1, 1.236568777004088, 4.888323684976709, 7.787264918596293},
    {"ResNet-50 (batch size 32)", 2, 2.3533431662281292, 9.74900668428164, 10.834571175121209},
    {"ResNet-50 (batch size 32)", 4, 4.379159016600026, 18.54991898899511, 13.763229095099536},
    {"ResNet-50 (batch size 32)", 8, 8.792272408351025, 33.56764624346652, 24.067423556662327},
    {"ResNet-50 (batch size 64)", 1, 0.6190282202246573, 2.6194694075770055, 4.394774823323071},
    {"ResNet-50 (batch size 64)", 2, 1.2636370655757299, 5.515986118186492, 7.922054367597505},
    {"ResNet-50 (batch size 64)", 4, 2.4122290974193286, 10.36465731519379, 9.451949566394442},
    {"ResNet-50 (batch size 64)", 8, 4.568730189823378, 18.221203053711378, 17.303172756892167},
    {"Transformer (batch size 128)", 1, 0.9815827061299781, 3.0735350560514787, 5.44610521981264},
    {"Transformer (batch size 128)", 2, 1.6574724675832473, 5.087428857861381, 10.069238394742342},
    {"Transformer (batch size 128)", 4, 2.8653897227567016, 8.774055121555529, 14.17451716526748},
    {"Transformer (batch size 128)", 8, 5.25701364575837, 13.683972901970593, 30.88352104398441},
    {"Transformer (batch size 16)", 1, 5.467379291465242, 9.537249191611776, 11.06408721300405},
    {"Transformer (batch size 16)", 2, 7.047480389257892, 14.305256582711568, 14.153819944879553},
    {"Transformer (batch size 16)", 4, 10.273295899928122, 21.234952837777445, 20.0849760042163},
    {"Transformer (batch size 16)", 8, 18.61836098073023, 29.01970958583352, 71.65168021872898},
    {"Transformer (batch size 256)", 1, 0.4583310125271042, 1.6776964927127545, 1.5951407072133263},
    {"Transformer (batch size 256)", 2, 0.8491945073883904, 2.941399294868527, 2.8852436298687203},
    {"Transformer (batch size 256)", 4, 1.512889415506919, 5.243218194017366, 4.763045770199511},
    {"Transformer (batch size 256)", 8, 2.923240558897543, 9.253168924824209, 9.71702368412533},
    {"Transformer (batch size 32)", 1, 3.5074188411966185, 7.8692234803005805, 10.620893339463915},
    {"Transformer (batch size 32)", 2, 5.096588727031865, 11.223818907187308, 13.328037548850137},
    {"Transformer (batch size 32)", 4, 7.984971344075782, 18.159443120087595, 22.822511223673345},
    {"Transformer (batch size 32)", 8, 13.912540666729642, 26.224031658180404, 63.97766004389649},
    {"Transformer (batch size 64)", 1, 1.7522265657120206, 5.091830907900463, 8.61775899193302},
    {"Transformer (batch size 64)", 2, 3.0630786746251895, 7.886748284628143, 15.876496488983058},
    {"Transformer (batch size 64)", 4, 5.030983562889494, 13.313004543426457, 19.65962221663049},
    {"Transformer (batch size 64)", 8, 8.97621997981465, 19.942981926164425, 49.650700211670745},
};
const std::size_t kEmbeddedThroughputCount =
    sizeof(kEmbeddedThroughputs) / sizeof(kEmbeddedThroughputs[0]);

popalloc::cluster::throughput_table embedded_throughput_table() {
  popalloc::cluster::throughput_table table;
  for (const char* gpu : {"k80", "p100", "v100"}) table.add_gpu_type(gpu);
  for (std::size_t r = 0; r < kEmbeddedThroughputCount; ++r) {
    const embedded_row& row = kEmbeddedThroughputs[r];
    const popalloc::cluster::job_key key{row.job_type, row.scale_factor};
    table.set(key, "k80", row.k80);
    table.set(key, "p100", row.p100);
    table.set(key, "v100", row.v100);
  }
  return table;
}

}  // namespace popalloc_schedule
