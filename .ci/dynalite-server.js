// dynalite's own command line (node_modules/dynalite/cli.js), with one difference: a client that leaves in
// the middle of a request does not end the server. dynalite 4.0.0 rethrows a request's error
// (index.js: `req.on('error', function (err) { throw err })`), so one connection closed mid-request
// (a service killed with SIGKILL, the tests' proxy cutting DynamoDB away) killed the whole emulator, and every
// later call hung until its deadline. DynamoDB itself shrugs such a client off; so does this.
//
//   node .ci/dynalite-server.js INSTALL_DIR --port PORT [dynalite's options]
'use strict'
const [, , home, ...args] = process.argv
const argv = require(home + '/node_modules/minimist')(args)

process.on('uncaughtException', (err) => {
  if (err && err.code === 'ECONNRESET') {
    console.error(new Date().toISOString() + ' dynalite: a client left mid-request (' + err.message + '); still serving')
    return
  }
  console.error(err)
  process.exit(1)
})

const server = require(home + '/node_modules/dynalite')(argv)
  .listen(argv.port || 4567, argv.host || undefined, () => {
    const address = server.address()
    console.log('Dynalite listening at: http://%s:%s', argv.host || 'localhost', address.port)
  })
