/* The driver's library steps (see ops.js): a library built through Zotero's own API, and
 * the library as that API shows it. Loaded into the driver's scope by bootstrap.js. */
/* global Zotero, waitFor */

/* ---------------------------------------------------------------- building a library */

async function ensureCurrentUser() {
  // Group items need a current user in the users table (support.js createGroup).
  if (!Zotero.Users.getCurrentUserID()) await Zotero.Users.setCurrentUserID(1);
  const id = Zotero.Users.getCurrentUserID();
  if (!Zotero.Users.getName(id)) await Zotero.Users.setName(id, "App Test");
}

async function createGroup(name) {
  await ensureCurrentUser();
  const group = new Zotero.Group();
  group.id = 4242;
  group.name = name;
  group.description = "";
  group.editable = true;
  group.filesEditable = true;
  group.version = 1;
  group.archived = false;
  await group.saveTx();
  return group;
}

async function createPaper(libraryID, paper, collectionIDs) {
  const item = new Zotero.Item(paper.itemType || "journalArticle");
  item.libraryID = libraryID;
  item.setField("title", paper.title);
  if (paper.date) item.setField("date", paper.date);
  item.setCreators(
    (paper.creators || []).map(([lastName, firstName]) => ({
      lastName,
      firstName,
      creatorType: "author",
    })),
  );
  for (const name of paper.collections || []) item.addToCollection(collectionIDs[name]);
  await item.saveTx();
  const options = { file: paper.file, parentItemID: item.id };
  const attachment = paper.linked
    ? await Zotero.Attachments.linkFromFile(options)
    : await Zotero.Attachments.importFromFile(options);
  if (paper.trashed) {
    item.deleted = true;
    await item.saveTx();
  }
  return { item, attachment };
}

async function createAnnotation(attachment, a) {
  const annotation = new Zotero.Item("annotation");
  annotation.libraryID = attachment.libraryID;
  annotation.parentID = attachment.id;
  annotation.annotationType = a.type;
  if (a.text) annotation.annotationText = a.text;
  if (a.comment) annotation.annotationComment = a.comment;
  annotation.annotationColor = a.color || "#ffd400";
  annotation.annotationPageLabel = String(a.pageLabel ?? a.pageIndex + 1);
  const page = String(a.pageIndex).padStart(5, "0");
  annotation.annotationSortIndex = `${page}|000100|00100`;
  annotation.annotationPosition = JSON.stringify({ pageIndex: a.pageIndex, rects: a.rects });
  await annotation.saveTx({ skipEditCheck: true });
  return annotation;
}

async function createNote(libraryID, html, parentID, collectionID) {
  const note = new Zotero.Item("note");
  note.libraryID = libraryID;
  if (parentID) note.parentID = parentID;
  if (collectionID) note.addToCollection(collectionID);
  note.setNote(html);
  await note.saveTx();
  return note;
}

/**
 * spec: {collections: [{name, parent}], papers: [{file, title, creators, date, collections,
 *   linked, trashed}], group: {name, papers}, annotations: [{paper, type, text, comment,
 *   pageIndex, rects}], notes: [{paper, html, collection}], trashedCollection: name}
 */
async function createLibrary({ spec }) {
  const userID = Zotero.Libraries.userLibraryID;
  const collectionIDs = {};
  const collections = {};
  for (const c of spec.collections || []) {
    const collection = new Zotero.Collection();
    collection.libraryID = userID;
    collection.name = c.name;
    if (c.parent) collection.parentID = collectionIDs[c.parent];
    await collection.saveTx();
    collectionIDs[c.name] = collection.id;
    collections[c.name] = collection.key;
  }
  const papers = {};
  const attachments = {};
  for (const paper of spec.papers || []) {
    const { item, attachment } = await createPaper(userID, paper, collectionIDs);
    papers[paper.title] = {
      key: item.key,
      id: item.id,
      attachmentKey: attachment.key,
      attachmentID: attachment.id,
      libraryID: userID,
    };
    attachments[paper.title] = attachment;
  }
  let group = null;
  if (spec.group) {
    const g = await createGroup(spec.group.name);
    group = { libraryID: g.libraryID, name: g.name, papers: {} };
    for (const paper of spec.group.papers || []) {
      const { item, attachment } = await createPaper(g.libraryID, paper, {});
      group.papers[paper.title] = {
        key: item.key,
        id: item.id,
        attachmentKey: attachment.key,
        attachmentID: attachment.id,
        libraryID: g.libraryID,
      };
    }
  }
  const annotations = [];
  for (const a of spec.annotations || []) {
    const annotation = await createAnnotation(attachments[a.paper], a);
    annotations.push({ key: annotation.key, paper: a.paper, type: a.type });
  }
  const notes = [];
  for (const n of spec.notes || []) {
    const parentID = n.paper ? papers[n.paper].id : null;
    const note = await createNote(
      userID,
      n.html,
      parentID,
      n.collection ? collectionIDs[n.collection] : null,
    );
    notes.push({ key: note.key, paper: n.paper || null });
  }
  if (spec.trashedCollection) {
    const collection = Zotero.Collections.get(collectionIDs[spec.trashedCollection]);
    collection.deleted = true;
    await collection.saveTx();
  }
  return { papers, collections, group, annotations, notes, dataDir: Zotero.DataDirectory.dir };
}

/** The library as Zotero's own API shows it: every library, item and collection. */
async function libraryView() {
  const libraries = [];
  for (const library of Zotero.Libraries.getAll()) {
    if (library.libraryType !== "user" && library.libraryType !== "group") continue;
    const id = library.libraryID;
    const items = [];
    for (const item of await Zotero.Items.getAll(id, false, true)) {
      const row = {
        key: item.key,
        itemType: item.itemType,
        deleted: !!item.deleted,
        parentKey: item.parentKey || null,
        collections: item.getCollections().map((cid) => Zotero.Collections.get(cid).key),
      };
      if (item.isRegularItem()) row.title = item.getField("title");
      if (item.isAttachment()) {
        row.linkMode = item.attachmentLinkMode;
        row.contentType = item.attachmentContentType;
        row.path = await item.getFilePathAsync();
      }
      items.push(row);
    }
    const collections = Zotero.Collections.getByLibrary(id, true, true).map((c) => ({
      key: c.key,
      name: c.name,
      parentKey: c.parentKey || null,
      deleted: !!c.deleted,
    }));
    libraries.push({
      libraryID: id,
      type: library.libraryType,
      name: library.name,
      items,
      collections,
    });
  }
  return { libraries, journalMode: await Zotero.DB.valueQueryAsync("PRAGMA journal_mode") };
}
