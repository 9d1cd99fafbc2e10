// A tiles bot that only walks up and down its column: always a valid line.
const readline = require('readline');
const rl = readline.createInterface({ input: process.stdin });
let row = 0, lines = 0, sizeSeen = 0;
rl.on('line', (line) => {
  lines++;
  if (line.startsWith('SIZE ')) { sizeSeen = lines; return; }
  if (sizeSeen && lines === sizeSeen + 1) { row = parseInt(line, 10); return; }
  if (line === 'TURN') {
    if (row > 1) { process.stdout.write('MOVE U\n'); row--; } else { process.stdout.write('MOVE D\n'); row++; }
  }
  if (line === 'GAMEOVER') process.exit(0);
});
