# Drawn by ddpscale. To restyle, edit this file and run `gnuplot phases_mlp-large.gp` in its directory.
set encoding utf8
set terminal svg size 800,500 fixed font 'sans,12' background rgb 'white' noenhanced
set output 'phases_mlp-large.svg'
set title 'mlp-large: median time per step by phase'
set ylabel 'ms per step'
set style data histograms
set style histogram rowstacked
set style fill solid 0.85 border -1
set boxwidth 0.7 relative
set key outside right top
set grid ytics
set xtics ('b4 x1' 0, 'b4 x2' 1, 'b8 x1' 2, 'b8 x2' 3, 'b16 x1' 4, 'b16 x2' 5, 'b32 x1' 6, 'b32 x2' 7, 'b64 x1' 8, 'b64 x2' 9, 'b128 x1' 10, 'b128 x2' 11) nomirror rotate by 45 right
set xrange [-0.6:11.6]
set yrange [0:*]
plot 'phases_mlp-large.dat' using 1 title 'data', \
     'phases_mlp-large.dat' using 2 title 'forward', \
     'phases_mlp-large.dat' using 3 title 'backward', \
     'phases_mlp-large.dat' using 4 title 'allreduce exposed', \
     'phases_mlp-large.dat' using 5 title 'optimizer'
set terminal pngcairo size 1000,625 font 'sans,12' background rgb 'white' noenhanced
set output 'phases_mlp-large.png'
replot
unset output
